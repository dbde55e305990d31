package io.pushhub.client;

import java.util.Objects;

/**
 * A tree whose RFC 8785 + SHA-256 hash is not the hub's: after a patch the client resubscribes;
 * after a snapshot it keeps the hub's tree (the hub is the authority; resubscribing would loop).
 * Immutable.
 */
public final class Mismatch implements ClientEvent {
    private final String screen;
    private final long version;
    private final String expected;
    private final String actual;
    private final TreeMeta.Source source;

    Mismatch(String screen, long version, String expected, String actual, TreeMeta.Source source) {
        this.screen = screen;
        this.version = version;
        this.expected = expected;
        this.actual = actual;
        this.source = source;
    }

    public String screen() { return screen; }

    public long version() { return version; }

    /** The hub's hash. */
    public String expected() { return expected; }

    /** The hash of the tree the client has. */
    public String actual() { return actual; }

    /** {@code SNAPSHOT} or {@code PATCH}. */
    public TreeMeta.Source source() { return source; }

    @Override
    public void deliverTo(ClientListener listener) { listener.onMismatch(this); }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof Mismatch)) return false;
        Mismatch m = (Mismatch) other;
        return screen.equals(m.screen) && version == m.version && expected.equals(m.expected)
                && actual.equals(m.actual) && source == m.source;
    }

    @Override
    public int hashCode() { return Objects.hash(screen, version, expected, actual, source); }

    @Override
    public String toString() {
        return "Mismatch(" + screen + " v" + version + " " + source + ": hub " + expected + ", ours " + actual + ")";
    }
}
