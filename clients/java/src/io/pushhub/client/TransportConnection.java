package io.pushhub.client;

/** One open (or opening) WebSocket of a {@link Transport}. Thread-safe. */
public interface TransportConnection {
    /**
     * Sends one text message, after those sent before it. Returns {@code false} when the
     * connection cannot take it (not open yet, closing or closed): it is not sent, and the client
     * keeps what it must not lose (acks, {@code track} events, render reports) for after the next
     * welcome. {@code true}: handed to the socket.
     */
    boolean send(String text);

    /** Starts the closing handshake; {@code onClosed} follows (after the peer's answer or a timeout). */
    void close(int code, String reason);

    /**
     * Stops using the connection at once, without a closing handshake (the client found the link
     * dead: a handshake would wait on it). Whatever the transport reports afterwards is ignored.
     * The default starts the closing handshake ({@code close(1001, …)}); a transport that can drop
     * the connection outright should.
     */
    default void abandon() {
        close(1001, "the link is dead");
    }
}
