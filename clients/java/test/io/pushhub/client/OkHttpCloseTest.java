package io.pushhub.client;

import static io.pushhub.client.Expect.equal;

import io.pushhub.client.okhttp.OkHttpTransport;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import okhttp3.Request;
import okhttp3.WebSocket;
import okhttp3.WebSocketListener;
import okio.ByteString;

/**
 * OkHttpTransport reports the peer's close code when the close arrives ({@code onClosing}), as
 * the JDK transport does: OkHttp may follow with {@code onFailure} (the peer shut TCP before our
 * answer went out), and a 1001 must not become a 1006.
 */
final class OkHttpCloseTest {
    private OkHttpCloseTest() {}

    /** The socket OkHttp would hand its listener: takes everything, does nothing. */
    static final class Idle implements WebSocket {
        @Override
        public Request request() { return null; }

        @Override
        public long queueSize() { return 0; }

        @Override
        public boolean send(String text) { return false; }

        @Override
        public boolean send(ByteString bytes) { return false; }

        @Override
        public boolean close(int code, String reason) { return true; }

        @Override
        public void cancel() {}
    }

    static void testAPeersCloseIsReportedWithItsCodeEvenWhenAFailureFollows() throws IOException {
        // A server that never answers the upgrade: OkHttp's own events stay away meanwhile.
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            List<String> closes = new CopyOnWriteArrayList<>();
            TransportConnection connection = new OkHttpTransport().open(new TransportRequest(
                    URI.create("ws://127.0.0.1:" + silent.getLocalPort() + "/v1/connect"), PushHub.SUBPROTOCOL, Map.of()),
                    new TransportListener() {
                        @Override
                        public void onOpen() {}

                        @Override
                        public void onText(String text) {}

                        @Override
                        public void onClosed(int code, String reason) { closes.add(code + " " + reason); }
                    });
            WebSocketListener events = (WebSocketListener) connection;
            WebSocket socket = new Idle();
            events.onClosing(socket, 1001, "going away");
            events.onFailure(socket, new EOFException("the peer shut the connection"), null);
            events.onClosed(socket, 1001, "going away");
            equal("one close, with the peer's code", List.of("1001 going away"), closes);
            connection.abandon();
        }
    }
}
