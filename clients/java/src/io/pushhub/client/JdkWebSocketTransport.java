package io.pushhub.client;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLContext;

/**
 * The JVM's transport: {@code java.net.http.WebSocket} (Java 11+). {@code wss://} uses the JVM's
 * trust store, or the {@link SSLContext} given (a private CA, a pinned certificate). Text messages
 * that arrive in parts are reassembled; sends are queued (the JDK allows one outstanding send).
 * A close the peer does not answer within {@code closeTimeout} ends the connection anyway.
 *
 * <p>Invariant (the {@link Transport} contract): each connection calls {@code onClosed} exactly
 * once, and nothing after it ({@code Connection.finished} guards every call).
 */
public final class JdkWebSocketTransport implements Transport {
    private static final ScheduledExecutorService TIMERS = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "pushhub-jdk-transport-timer");
        thread.setDaemon(true);
        return thread;
    });

    private final HttpClient client;
    private final Duration connectTimeout;
    private final Duration closeTimeout;

    /** With the JVM's trust store. */
    public JdkWebSocketTransport() {
        this(null);
    }

    /** With {@code sslContext} for {@code wss://} ({@code null}: the JVM's default). */
    public JdkWebSocketTransport(SSLContext sslContext) {
        this(sslContext, Duration.ofSeconds(10), Duration.ofSeconds(5));
    }

    public JdkWebSocketTransport(SSLContext sslContext, Duration connectTimeout, Duration closeTimeout) {
        HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(connectTimeout);
        if (sslContext != null) builder.sslContext(sslContext);
        this.client = builder.build();
        this.connectTimeout = connectTimeout;
        this.closeTimeout = closeTimeout;
    }

    @Override
    public TransportConnection open(TransportRequest request, TransportListener listener) {
        Connection connection = new Connection(listener);
        WebSocket.Builder builder = client.newWebSocketBuilder().connectTimeout(connectTimeout);
        if (request.subprotocol() != null) builder.subprotocols(request.subprotocol());
        for (Map.Entry<String, String> header : request.headers().entrySet()) {
            builder.header(header.getKey(), header.getValue());
        }
        // Success is reported by the JDK's `onOpen` (before any message); only a failure here.
        builder.buildAsync(request.uri(), connection).whenComplete((socket, failure) -> {
            if (failure != null) connection.finish(1006, FailureText.of(failure));
        });
        return connection;
    }

    /** A GET through the same {@link HttpClient} (its TLS settings). */
    @Override
    public CompletableFuture<HttpAnswer> get(TransportRequest request) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(request.uri()).timeout(connectTimeout.multipliedBy(3))
                .GET();
        request.headers().forEach(builder::header);
        return client.sendAsync(builder.build(), HttpResponse.BodyHandlers.ofByteArray()).thenApply(response -> {
            Map<String, String> headers = new java.util.LinkedHashMap<>();
            response.headers().map().forEach((name, values) -> headers.put(name, String.join(", ", values)));
            return new HttpAnswer(response.statusCode(), headers, response.body());
        });
    }

    /** One connection: the JDK's listener, and the client's handle. */
    private final class Connection implements TransportConnection, WebSocket.Listener {
        private final TransportListener listener;
        private final AtomicBoolean finished = new AtomicBoolean();
        private final StringBuilder parts = new StringBuilder();
        // guarded by `this`
        private WebSocket socket;
        private CompletableFuture<?> sending = CompletableFuture.completedFuture(null);
        private boolean closing;
        private boolean abandoned;

        Connection(TransportListener listener) {
            this.listener = listener;
        }

        void finish(int code, String reason) {
            if (finished.compareAndSet(false, true)) listener.onClosed(code, reason);
        }

        // MARK: TransportConnection

        @Override
        public boolean send(String text) {
            synchronized (this) {
                if (socket == null || closing || finished.get() || socket.isOutputClosed()) return false;
                WebSocket target = socket;
                sending = sending.handle((ignored, error) -> null).thenCompose(ignored -> target.sendText(text, true));
                return true;
            }
        }

        @Override
        public void close(int code, String reason) {
            WebSocket target;
            synchronized (this) {
                if (closing) return;
                closing = true;
                target = socket;
                if (target != null) {
                    sending = sending.handle((ignored, error) -> null)
                            .thenCompose(ignored -> target.sendClose(code, reason));
                }
            }
            if (target == null) return; // not open yet: `onOpen` aborts it
            TIMERS.schedule(() -> {
                if (!finished.get()) {
                    target.abort();
                    finish(1006, "the peer did not answer the close within " + closeTimeout.toMillis() + " ms");
                }
            }, closeTimeout.toMillis(), TimeUnit.MILLISECONDS);
        }

        @Override
        public void abandon() {
            WebSocket target;
            synchronized (this) {
                abandoned = true;
                closing = true;
                target = socket;
            }
            if (target != null) target.abort();
            finish(1006, "abandoned: the link is dead");
        }

        // MARK: WebSocket.Listener (the JDK calls these one at a time)

        @Override
        public void onOpen(WebSocket webSocket) {
            boolean abandonNow;
            synchronized (this) {
                this.socket = webSocket;
                abandonNow = abandoned || closing;
            }
            if (abandonNow) {
                webSocket.abort();
                finish(1006, "closed before it opened");
                return;
            }
            if (!finished.get()) listener.onOpen();
            webSocket.request(1);
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            parts.append(data);
            if (last) {
                String text = parts.toString();
                parts.setLength(0);
                if (!finished.get()) listener.onText(text);
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
            webSocket.request(1); // protocol v1 is text only: ignored
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            // Returning null answers the close at once (the JDK echoes it when our output is open).
            finish(statusCode, reason);
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            finish(1006, FailureText.of(error));
        }
    }
}
