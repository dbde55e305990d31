package io.pushhub.client;

/** Where the client's connection stands; each change is an event ({@link ClientListener#onState}). */
public enum ConnectionState implements ClientEvent {
    /** The first connection is being made. */
    CONNECTING,
    /** Welcomed by the hub. */
    LIVE,
    /** Waiting to retry, or retrying, after a drop. */
    RECONNECTING,
    /** {@code close()} was called, or the hub refused in a way retrying cannot fix. */
    CLOSED;

    @Override
    public void deliverTo(ClientListener listener) {
        listener.onState(this);
    }
}
