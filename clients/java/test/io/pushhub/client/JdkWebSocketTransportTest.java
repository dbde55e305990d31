package io.pushhub.client;

import static io.pushhub.client.Expect.equal;
import static io.pushhub.client.Expect.isTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The JDK transport against a hand-written WebSocket peer on loopback (RFC 6455 frames written
 * byte by byte): a text message in fragments — one split inside a UTF-8 sequence — arrives
 * whole, a 1 MiB message arrives whole, the Authorization header and subprotocol are sent, what
 * the client sends arrives, and the peer's close code and reason reach {@code onClosed} once.
 */
final class JdkWebSocketTransportTest {
    private JdkWebSocketTransportTest() {}

    static void testFragmentsAndLargeMessagesArriveWholeAndThePeersCloseIsReportedOnce() throws Exception {
        String big = "x".repeat(1 << 20);
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<String> peer = CompletableFuture.supplyAsync(() -> {
                try (Socket socket = server.accept()) {
                    InputStream in = socket.getInputStream();
                    OutputStream out = socket.getOutputStream();
                    String request = readHead(in);
                    String key = header(request, "Sec-WebSocket-Key");
                    String accept = Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-1")
                            .digest((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").getBytes(StandardCharsets.US_ASCII)));
                    out.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Accept: " + accept + "\r\nSec-WebSocket-Protocol: pushhub.v1\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    byte[] text = "fragmented ü message".getBytes(StandardCharsets.UTF_8);
                    int split = "fragmented ".length() + 1; // inside the two bytes of ü
                    frame(out, 0x01, false, java.util.Arrays.copyOfRange(text, 0, split));                 // text, not FIN
                    frame(out, 0x09, true, new byte[] {'p'});                                            // a ping between fragments
                    frame(out, 0x00, true, java.util.Arrays.copyOfRange(text, split, text.length));      // continuation, FIN
                    frame(out, 0x01, true, big.getBytes(StandardCharsets.US_ASCII));
                    String fromClient = readTextFrame(new DataInputStream(in));
                    frame(out, 0x08, true, new byte[] {0x03, (byte) 0xE9, 'b', 'y', 'e'});              // close 1001 "bye"
                    out.flush();
                    readTextFrame(new DataInputStream(in)); // the client's answer (a close frame)
                    return request + "\n" + fromClient;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            List<String> events = new CopyOnWriteArrayList<>();
            TransportConnection[] connection = new TransportConnection[1];
            connection[0] = new JdkWebSocketTransport().open(
                    new TransportRequest(URI.create("ws://127.0.0.1:" + server.getLocalPort() + "/v1/connect"), "pushhub.v1",
                            Map.of("Authorization", "Bearer t0k")),
                    new TransportListener() {
                        @Override
                        public void onOpen() { events.add("open"); }

                        @Override
                        public void onText(String text) {
                            events.add(text.length() > 100 ? "big " + text.length() : text);
                            if (text.length() > 100) connection[0].send("hi");
                        }

                        @Override
                        public void onClosed(int code, String reason) { events.add("closed " + code + " " + reason); }
                    });
            String seen = peer.get(10, TimeUnit.SECONDS);
            PushHubTest.eventually("closed", () -> events.stream().anyMatch(e -> e.startsWith("closed")));
            Thread.sleep(100); // nothing may follow the close
            equal("events", List.of("open", "fragmented ü message", "big " + big.length(), "closed 1001 bye"), events);
            isTrue("the token went as a header", seen.contains("Authorization: Bearer t0k"));
            isTrue("the subprotocol was offered", seen.toLowerCase(java.util.Locale.ROOT).contains("sec-websocket-protocol: pushhub.v1"));
            isTrue("the client's message arrived", seen.endsWith("\nhi"));
        }
    }

    static void testARefusedConnectionIsAClose1006ThatSaysWhy() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        List<String> events = new CopyOnWriteArrayList<>();
        new JdkWebSocketTransport().open(new TransportRequest(URI.create("ws://127.0.0.1:" + port + "/v1/connect"), null, Map.of()),
                new TransportListener() {
                    @Override
                    public void onOpen() { events.add("open"); }

                    @Override
                    public void onText(String text) { events.add(text); }

                    @Override
                    public void onClosed(int code, String reason) { events.add(code + " " + reason); }
                });
        PushHubTest.eventually("closed", () -> !events.isEmpty());
        isTrue("1006 with the cause: " + events, events.size() == 1 && events.get(0).startsWith("1006 ConnectException"));
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) throw new IOException("the client closed during its request");
            head.write(b);
        }
        return head.toString(StandardCharsets.US_ASCII);
    }

    private static String header(String head, String name) {
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith(name.toLowerCase(java.util.Locale.ROOT) + ":")) {
                return line.substring(name.length() + 1).trim();
            }
        }
        throw new IllegalStateException("no " + name + " in " + head);
    }

    /** One unmasked server frame (RFC 6455 §5.2). */
    private static void frame(OutputStream out, int opcode, boolean fin, byte[] payload) throws IOException {
        out.write((fin ? 0x80 : 0) | opcode);
        if (payload.length < 126) {
            out.write(payload.length);
        } else if (payload.length < 65536) {
            out.write(126);
            out.write(payload.length >> 8);
            out.write(payload.length & 0xff);
        } else {
            out.write(127);
            for (int shift = 56; shift >= 0; shift -= 8) out.write((int) ((long) payload.length >> shift) & 0xff);
        }
        out.write(payload);
        out.flush();
    }

    /** One masked client frame's payload as text (skipping pongs). */
    private static String readTextFrame(DataInputStream in) throws IOException {
        while (true) {
            int first = in.readUnsignedByte();
            int second = in.readUnsignedByte();
            long length = second & 0x7f;
            if (length == 126) length = in.readUnsignedShort();
            if (length == 127) length = in.readLong();
            byte[] mask = new byte[4];
            in.readFully(mask);
            byte[] payload = new byte[(int) length];
            in.readFully(payload);
            for (int i = 0; i < payload.length; i++) payload[i] ^= mask[i % 4];
            if ((first & 0x0f) == 0x0a) continue; // the pong for our ping
            return new String(payload, StandardCharsets.UTF_8);
        }
    }
}
