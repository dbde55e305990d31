package io.pushhub.client;

import java.util.Objects;

/** What a liveness check found ({@link ClientSession#checkLink}). Immutable. */
final class LinkCheck {
    enum Kind {
        /** Something arrived recently enough: check again at {@code untilMs}. */
        ALIVE,
        /** Nothing arrived for {@code silenceMs} (at least the limit): give the connection up and reconnect. */
        DEAD,
        /** There is no connection to check. */
        CLOSED
    }

    final Kind kind;
    final long untilMs;
    final long silenceMs;

    private LinkCheck(Kind kind, long untilMs, long silenceMs) {
        this.kind = kind;
        this.untilMs = untilMs;
        this.silenceMs = silenceMs;
    }

    static LinkCheck alive(long untilMs) { return new LinkCheck(Kind.ALIVE, untilMs, 0); }

    static LinkCheck dead(long silenceMs) { return new LinkCheck(Kind.DEAD, 0, silenceMs); }

    static LinkCheck closed() { return new LinkCheck(Kind.CLOSED, 0, 0); }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof LinkCheck)) return false;
        LinkCheck c = (LinkCheck) other;
        return kind == c.kind && untilMs == c.untilMs && silenceMs == c.silenceMs;
    }

    @Override
    public int hashCode() { return Objects.hash(kind, untilMs, silenceMs); }

    @Override
    public String toString() {
        return kind + (kind == Kind.ALIVE ? " until " + untilMs : kind == Kind.DEAD ? " silent " + silenceMs : "");
    }
}
