package io.pushhub.client;

/**
 * Something the client tells the app besides trees and syncs: a state change
 * ({@link ConnectionState}), a {@link Welcome}, a {@link CloseEvent}, a {@link HubError}, a
 * {@link Resubscribe}, a {@link Mismatch}, a {@link Gone}. Each knows which
 * {@link ClientListener} method receives it, so adding an event adds a listener method.
 */
public interface ClientEvent {
    /** Calls the method of {@code listener} that receives this event. */
    void deliverTo(ClientListener listener);
}
