package io.pushhub.client;

/**
 * Counters for diagnostics and tests; {@link PushHub#stats()} returns a copy. The session owns
 * the live instance (mutated on the client's state thread only).
 */
public final class ClientStats {
    int connects;
    int welcomes;
    int snapshots;
    int patches;
    int unchanged;
    int resubscribes;
    int syncs;
    int duplicateSyncs;
    int pushedSyncs;
    int pending;
    int deadLinks;
    int epochChanges;
    int tracks;
    int droppedTracks;

    ClientStats() {}

    ClientStats copy() {
        ClientStats c = new ClientStats();
        c.connects = connects;
        c.welcomes = welcomes;
        c.snapshots = snapshots;
        c.patches = patches;
        c.unchanged = unchanged;
        c.resubscribes = resubscribes;
        c.syncs = syncs;
        c.duplicateSyncs = duplicateSyncs;
        c.pushedSyncs = pushedSyncs;
        c.pending = pending;
        c.deadLinks = deadLinks;
        c.epochChanges = epochChanges;
        c.tracks = tracks;
        c.droppedTracks = droppedTracks;
        return c;
    }

    /** Connections opened (hellos sent). */
    public int connects() { return connects; }

    public int welcomes() { return welcomes; }

    public int snapshots() { return snapshots; }

    public int patches() { return patches; }

    public int unchanged() { return unchanged; }

    public int resubscribes() { return resubscribes; }

    /** Sync messages received, duplicates included. */
    public int syncs() { return syncs; }

    /** Syncs dropped because their id was seen already (a replay). */
    public int duplicateSyncs() { return duplicateSyncs; }

    /** Syncs handed to the app from a silent push ({@code handlePush}), not seen on the socket before. */
    public int pushedSyncs() { return pushedSyncs; }

    /** {@code pending} answers: subscriptions to screens not published yet. */
    public int pending() { return pending; }

    /** Connections given up because nothing arrived for 2 × heartbeat_s + 2 s. */
    public int deadLinks() { return deadLinks; }

    /** Welcomes that named another hub state than the one storage held (what it held was dropped). */
    public int epochChanges() { return epochChanges; }

    /** {@code track} events sent to the hub (at once, or after the welcome that ended a wait). */
    public int tracks() { return tracks; }

    /**
     * {@code track} events dropped unsent: the oldest beyond 100 waiting while not connected, those
     * waiting for a user the client no longer signs in as, and those waiting or made once the
     * client is closed for good.
     */
    public int droppedTracks() { return droppedTracks; }

    @Override
    public String toString() {
        return "{\"connects\":" + connects + ",\"welcomes\":" + welcomes + ",\"snapshots\":" + snapshots
                + ",\"patches\":" + patches + ",\"unchanged\":" + unchanged + ",\"resubscribes\":" + resubscribes
                + ",\"syncs\":" + syncs + ",\"duplicateSyncs\":" + duplicateSyncs
                + ",\"pushedSyncs\":" + pushedSyncs + ",\"pending\":" + pending
                + ",\"deadLinks\":" + deadLinks + ",\"epochChanges\":" + epochChanges + ",\"tracks\":" + tracks
                + ",\"droppedTracks\":" + droppedTracks + "}";
    }
}
