package io.pushhub.client;

import java.util.Objects;

/**
 * The client dropped its copy of a screen and asked the hub for a snapshot (a subscribe without
 * {@code have}, DESIGN §3): why, the version it held, and the message's {@code from} and
 * {@code version}. Immutable.
 */
public final class Resubscribe implements ClientEvent {
    /** Why the client resubscribed. */
    public enum Reason {
        /** A patch applied, but the result does not hash to the hub's hash. */
        HASH_MISMATCH,
        /** A patch {@code from} a version the client does not hold. */
        UNEXPECTED_FROM,
        /** A patch that does not apply (RFC 6902 refuses it). */
        PATCH_FAILED,
        /** {@code unchanged} for a screen the client holds no tree of. */
        NO_TREE;

        /** The wire name ({@code hash_mismatch}), as the other clients name it. */
        public String wireName() { return name().toLowerCase(java.util.Locale.ROOT); }
    }

    private final String screen;
    private final Reason reason;
    private final Long held;
    private final Long from;
    private final Long version;

    Resubscribe(String screen, Reason reason, Long held, Long from, Long version) {
        this.screen = screen;
        this.reason = reason;
        this.held = held;
        this.from = from;
        this.version = version;
    }

    public String screen() { return screen; }

    public Reason reason() { return reason; }

    /** The version the client held ({@code null}: none). */
    public Long held() { return held; }

    /** The message's {@code from} ({@code null}: not a patch). */
    public Long from() { return from; }

    public Long version() { return version; }

    @Override
    public void deliverTo(ClientListener listener) { listener.onResubscribe(this); }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof Resubscribe)) return false;
        Resubscribe r = (Resubscribe) other;
        return screen.equals(r.screen) && reason == r.reason && Objects.equals(held, r.held)
                && Objects.equals(from, r.from) && Objects.equals(version, r.version);
    }

    @Override
    public int hashCode() { return Objects.hash(screen, reason, held, from, version); }

    @Override
    public String toString() {
        return "Resubscribe(" + screen + ", " + reason.wireName() + ", held " + held + ", from " + from + ", version "
                + version + ")";
    }
}
