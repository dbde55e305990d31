package io.pushhub.client.okhttp;

import io.pushhub.client.HttpAnswer;
import io.pushhub.client.Transport;
import io.pushhub.client.TransportConnection;
import io.pushhub.client.TransportListener;
import io.pushhub.client.TransportRequest;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okhttp3.WebSocket;
import okhttp3.WebSocketListener;

/**
 * The Android transport: OkHttp's WebSocket (OkHttp 3.12+ and 4.x; compiled here against
 * Debian's 3.13.1). TLS, proxies, certificate pinning and timeouts are the {@link OkHttpClient}'s
 * the app passes (share the app's client: one connection pool, one dispatcher). OkHttp answers
 * pings and reassembles fragmented messages itself; {@code wss://} and {@code ws://} URIs are
 * passed as they are.
 *
 * <p>Invariant (the {@link Transport} contract): each connection calls {@code onClosed} exactly
 * once ({@code finished} guards it), and nothing after it.
 */
public final class OkHttpTransport implements Transport {
    private final OkHttpClient client;

    /** With a client of OkHttp's defaults (the platform's trust store). */
    public OkHttpTransport() {
        this(new OkHttpClient());
    }

    /** With the app's {@code client} (its TLS settings, pinning, proxy and timeouts). */
    public OkHttpTransport(OkHttpClient client) {
        this.client = client;
    }

    @Override
    public TransportConnection open(TransportRequest request, TransportListener listener) {
        // OkHttp takes http(s) URLs for WebSockets too (ws → http, wss → https).
        String url = request.uri().toString().replaceFirst("^(?i)ws:", "http:").replaceFirst("^(?i)wss:", "https:");
        Request.Builder builder = new Request.Builder().url(url);
        if (request.subprotocol() != null) builder.header("Sec-WebSocket-Protocol", request.subprotocol());
        for (Map.Entry<String, String> header : request.headers().entrySet()) {
            builder.header(header.getKey(), header.getValue());
        }
        Connection connection = new Connection(listener);
        connection.socket = client.newWebSocket(builder.build(), connection);
        return connection;
    }

    /** A GET through the same {@link OkHttpClient}. */
    @Override
    public CompletableFuture<HttpAnswer> get(TransportRequest request) {
        Request.Builder builder = new Request.Builder().url(request.uri().toString()).get();
        for (Map.Entry<String, String> header : request.headers().entrySet()) {
            builder.header(header.getKey(), header.getValue());
        }
        CompletableFuture<HttpAnswer> answer = new CompletableFuture<>();
        client.newCall(builder.build()).enqueue(new Callback() {
            @Override
            public void onFailure(Call call, IOException error) {
                answer.completeExceptionally(error);
            }

            @Override
            public void onResponse(Call call, Response response) {
                try (ResponseBody body = response.body()) {
                    Map<String, String> headers = new LinkedHashMap<>();
                    for (String name : response.headers().names()) {
                        headers.put(name, joined(response.headers(name)));
                    }
                    byte[] bytes = body == null ? new byte[0] : body.bytes();
                    answer.complete(new HttpAnswer(response.code(), headers, bytes));
                } catch (IOException error) {
                    answer.completeExceptionally(error);
                }
            }
        });
        return answer;
    }

    /** The values of a repeated header, comma-separated (not String.join: Android has it from API 26 only). */
    private static String joined(java.util.List<String> values) {
        StringBuilder out = new StringBuilder();
        for (String value : values) {
            if (out.length() > 0) out.append(", ");
            out.append(value);
        }
        return out.toString();
    }

        /** One connection: OkHttp's listener, and the client's handle. */
    private static final class Connection extends WebSocketListener implements TransportConnection {
        private final TransportListener listener;
        private final AtomicBoolean finished = new AtomicBoolean();
        volatile WebSocket socket;

        Connection(TransportListener listener) {
            this.listener = listener;
        }

        private void finish(int code, String reason) {
            if (finished.compareAndSet(false, true)) listener.onClosed(code, reason);
        }

        /** False when finished, or when OkHttp refuses it (closing, closed, or its 16 MiB queue full). */
        @Override
        public boolean send(String text) {
            return !finished.get() && socket.send(text);
        }

        @Override
        public void close(int code, String reason) {
            socket.close(code, reason.isEmpty() ? null : reason);
        }

        @Override
        public void abandon() {
            socket.cancel();
            finish(1006, "abandoned: the link is dead");
        }

        @Override
        public void onOpen(WebSocket webSocket, Response response) {
            if (!finished.get()) listener.onOpen();
        }

        @Override
        public void onMessage(WebSocket webSocket, String text) {
            if (!finished.get()) listener.onText(text);
        }

        @Override
        public void onClosing(WebSocket webSocket, int code, String reason) {
            // Answer the peer's close with its code; one that may not be sent (1005 "none") as 1000.
            boolean sendable = code >= 1000 && code < 5000 && code != 1004 && code != 1005 && code != 1006
                    && code != 1015 && !(code >= 1012 && code < 3000);
            webSocket.close(sendable ? code : 1000, null);
            // The peer's code is reported now, as the JDK transport does: OkHttp may follow with
            // onFailure (the peer shut TCP before our close went out), which would say 1006.
            finish(code, reason);
        }

        @Override
        public void onClosed(WebSocket webSocket, int code, String reason) {
            finish(code, reason); // a close we started: the peer's answer
        }

        @Override
        public void onFailure(WebSocket webSocket, Throwable error, Response response) {
            String message = error.getMessage();
            String answer = response == null ? "" : " (HTTP " + response.code() + ")";
            finish(1006, error.getClass().getSimpleName() + (message == null ? "" : ": " + message) + answer);
        }
    }
}
