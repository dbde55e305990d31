package io.pushhub.client;

import java.util.Objects;

/**
 * A sync-now notification (DESIGN §5), handed to the app after its random 0..jitter wait and then
 * acked. Content-free: what to refresh is {@link #scope()}. Immutable.
 */
public final class SyncNotification {
    private final String id;
    private final long seq;
    private final String reason;
    private final String scope;
    private final Json hint;
    private final boolean mandatory;
    private final long jitterMs;
    private final long delayMs;

    SyncNotification(String id, long seq, String reason, String scope, Json hint, boolean mandatory, long jitterMs,
            long delayMs) {
        this.id = id;
        this.seq = seq;
        this.reason = reason;
        this.scope = scope;
        this.hint = hint;
        this.mandatory = mandatory;
        this.jitterMs = jitterMs;
        this.delayMs = delayMs;
    }

    /** The sync's id; the same sync may arrive twice (a replay), the client hands it over once. */
    public String id() { return id; }

    public long seq() { return seq; }

    /** Free text ({@code hotfix}). */
    public String reason() { return reason; }

    /** What to refresh: {@code bundle}, {@code config}, {@code screen:<name>}, … */
    public String scope() { return scope; }

    /** The optional small hint object, or {@code null}. */
    public Json hint() { return hint; }

    /** The app must apply it before continuing (a hotfix). */
    public boolean mandatory() { return mandatory; }

    /** The hub's {@code jitter_ms}: the client waits a random 0..jitterMs before handing it over. */
    public long jitterMs() { return jitterMs; }

    /** How long the client waited before handing it over. */
    public long delayMs() { return delayMs; }

    SyncNotification delayed(long delayMs) {
        return new SyncNotification(id, seq, reason, scope, hint, mandatory, jitterMs, delayMs);
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof SyncNotification)) return false;
        SyncNotification s = (SyncNotification) other;
        return id.equals(s.id) && seq == s.seq && reason.equals(s.reason) && scope.equals(s.scope)
                && Objects.equals(hint, s.hint) && mandatory == s.mandatory && jitterMs == s.jitterMs
                && delayMs == s.delayMs;
    }

    @Override
    public int hashCode() { return Objects.hash(id, seq, reason, scope, mandatory, jitterMs, delayMs); }

    @Override
    public String toString() {
        return "Sync(" + id + " seq " + seq + " " + reason + " " + scope + (mandatory ? " mandatory" : "")
                + " jitter " + jitterMs + " delay " + delayMs + ")";
    }
}
