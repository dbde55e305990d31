package io.pushhub.client;

/**
 * One {@link PushHub#subscribe} call: {@link #tree()} and {@link #meta()} are the latest tree
 * handed over (readable from any thread); {@link #close()} removes its listener, and the last
 * subscription of a screen to close unsubscribes.
 */
public final class Subscription implements AutoCloseable {
    private final String screen;
    private final int id;
    private final PushHub hub;

    Subscription(String screen, int id, PushHub hub) {
        this.screen = screen;
        this.id = id;
        this.hub = hub;
    }

    public String screen() { return screen; }

    /** The latest tree of the screen ({@code null} until one arrived). */
    public Json tree() { return hub.currentTree(screen); }

    /** The latest tree's version, hash, source and variants ({@code null} until one arrived). */
    public TreeMeta meta() { return hub.currentMeta(screen); }

    /** Whether the hub said the screen has no version yet (until its first publish arrives). */
    public boolean isPending() { return hub.isPending(screen); }

    @Override
    public void close() { hub.unsubscribe(screen, id); }
}
