package io.pushhub.client;

/** The events of one {@link TransportConnection}, in the order {@link Transport}'s contract states. */
public interface TransportListener {
    /** The WebSocket handshake succeeded. */
    void onOpen();

    /** One whole text message. */
    void onText(String text);

    /**
     * The connection ended: the close code the peer sent (1006 when the connection dropped or never
     * opened) and the reason (for 1006, what went wrong: a refused TLS certificate, a refused
     * connection, …).
     */
    void onClosed(int code, String reason);
}
