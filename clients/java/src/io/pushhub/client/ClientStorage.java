package io.pushhub.client;

import java.io.IOException;

/**
 * Where the client keeps what lets a restart resume without a full resend (docs/clients.md
 * "Storage"): each subscribed screen's tree, version and hash ({@code have}), {@code last_sync}
 * and the hub state (epoch) they count in, per user, and an anonymous device id. Keys are short
 * strings ({@code user:u42:screen:home}, {@code user:u42:epoch}, {@code device}), values JSON text.
 *
 * <p>Called on the client's state thread only, one call at a time. A call that throws is
 * reported to the app as an error with code {@code storage}; the client goes on from memory.
 * {@link FileStorage} (the JVM) and {@link MemoryStorage} ship; Android's {@code SharedPreferences}
 * fits in a few lines (clients/java/example/).
 */
public interface ClientStorage {
    /** The value of {@code key}, or {@code null} when there is none. */
    String get(String key) throws IOException;

    void put(String key, String value) throws IOException;

    /** Removes {@code key}; removing a key that is not there is not an error. */
    void remove(String key) throws IOException;
}
