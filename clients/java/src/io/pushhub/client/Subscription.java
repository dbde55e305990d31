package io.pushhub.client;

/**
 * One {@link PushHub#subscribe} call: {@link #tree()} and {@link #meta()} are the latest tree
 * handed over (readable from any thread); {@link #close()} removes its listener, and the last
 * subscription of a screen to close unsubscribes.
 *
 * <p>Invariant: once {@link #close()} returned, its listener is not called again, also for a
 * tree already queued on the listener executor ({@code closed} is set at once, on the caller's
 * thread, and read on the listener thread before each call).
 */
public final class Subscription implements AutoCloseable {
    private final String screen;
    private final int id;
    private final TreeListener listener;
    private final PushHub hub;
    private volatile boolean closed;

    Subscription(String screen, int id, TreeListener listener, PushHub hub) {
        this.screen = screen;
        this.id = id;
        this.listener = listener;
        this.hub = hub;
    }

    public String screen() { return screen; }

    int id() { return id; }

    /** Calls the listener with {@code tree}, unless the subscription was closed (on the listener thread). */
    void draw(Json tree, TreeMeta meta) throws Exception {
        if (!closed) listener.onTree(tree, meta);
    }

    /** The latest tree of the screen ({@code null} until one arrived). */
    public Json tree() { return hub.currentTree(screen); }

    /** The latest tree's version, hash, source and variants ({@code null} until one arrived). */
    public TreeMeta meta() { return hub.currentMeta(screen); }

    /** Whether the hub said the screen has no version yet (until its first publish arrives). */
    public boolean isPending() { return hub.isPending(screen); }

    /** Removes the listener (not called again from now on); harmless when closed already. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        hub.unsubscribe(screen, id);
    }
}
