package io.pushhub.client;

/**
 * Gets each sync after its random 0..jitter wait ({@link PushHub#onSync}), on the listener
 * executor. The client acks the sync once every sync listener returned (a throw is reported on
 * stderr and still counts as handled: the hub would replay it otherwise, forever).
 */
@FunctionalInterface
public interface SyncListener {
    void onSync(SyncNotification sync);
}
