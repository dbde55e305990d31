package io.pushhub.client;

/** Undoes a registration ({@link PushHub#onSync}, {@link PushHub#addListener}); calling it twice is harmless. */
@FunctionalInterface
public interface Cancellation {
    void cancel();
}
