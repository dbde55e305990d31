package io.pushhub.client;

/**
 * Receives the client's events ({@link PushHub#addListener}); override what you need. Called on
 * the listener executor ({@link PushHubOptions.Builder#listenerExecutor}), one call at a time and
 * in the order the events happened. A listener that throws is reported on stderr and does not
 * stop the others.
 */
public interface ClientListener {
    /** The connection state changed. */
    default void onState(ConnectionState state) {}

    /** The hub welcomed a connection: a session started. */
    default void onWelcome(Welcome welcome) {}

    /** A connection closed; {@link CloseEvent#willReconnect()} says whether another follows. */
    default void onClose(CloseEvent close) {}

    /** The hub sent an {@code error} (a refused subscribe names its screen), or a client-side problem. */
    default void onError(HubError error) {}

    /** The client dropped its copy of a screen and asked the hub for a snapshot. */
    default void onResubscribe(Resubscribe resubscribe) {}

    /** A tree did not hash to the hub's hash (after a patch, a resubscribe follows). */
    default void onMismatch(Mismatch mismatch) {}

    /** A screen was deleted: its subscription ended. */
    default void onGone(Gone gone) {}

    /** The hub has no version of a subscribed screen yet; its first publish brings the tree. */
    default void onPending(String screen) {}
}
