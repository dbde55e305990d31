package io.pushhub.client;

/**
 * The client's rule for a dead link (docs/protocol.md "Heartbeats"): a client that asks for
 * heartbeats ({@code hello.heartbeat}) gets something from the hub at least every
 * {@code heartbeat_s} (a {@code heartbeat}, or what the hub had queued), so when nothing at all
 * arrived for 2 × heartbeat_s + 2 s the link is dead — a dropped NAT mapping, a hub gone without
 * a FIN — and the client stops using it and reconnects. Pure: the caller passes {@code nowMs} (a
 * clock that does not jump) and arms one timer for {@link #deadlineMs()}.
 *
 * <p>Invariant: the deadline is {@code null} exactly while there is no connection, or the
 * connection's hub sends no heartbeats (a hub from before them names no {@code epoch} in its
 * welcome: its silence proves nothing); it only moves later as messages arrive, so a timer armed
 * for an earlier deadline re-checks and re-arms.
 */
final class LinkLiveness {
    /** The protocol's default interval, until a welcome names the hub's. */
    static final int DEFAULT_HEARTBEAT_SECONDS = 25;

    private int heartbeatSeconds = DEFAULT_HEARTBEAT_SECONDS;
    private Long heardAtMs;

    int heartbeatSeconds() { return heartbeatSeconds; }

    /** How long a link may be silent: two heartbeats and 2 s for the network's jitter. */
    long limitMs() { return (2L * heartbeatSeconds + 2) * 1000; }

    /** When the link is dead if nothing arrives before; {@code null} while it is not watched. */
    Long deadlineMs() { return heardAtMs == null ? null : heardAtMs + limitMs(); }

    /** A connection is being made: the same limit covers its handshake and the welcome. */
    void connecting(long nowMs) { heardAtMs = nowMs; }

    /** Something arrived (any text, JSON or not). */
    void heard(long nowMs) {
        if (heardAtMs != null) heardAtMs = nowMs;
    }

    /**
     * The welcome named the hub's interval ({@code heartbeat_s}; 0 or less keeps the current one),
     * and whether that hub sends heartbeats at all (no: the link is not watched until the next
     * connection).
     */
    void welcomed(int heartbeatSeconds, boolean hubSendsHeartbeats) {
        if (heartbeatSeconds > 0) this.heartbeatSeconds = heartbeatSeconds;
        if (!hubSendsHeartbeats) heardAtMs = null;
    }

    void closed() { heardAtMs = null; }

    /** Whether the link is dead at {@code nowMs} (never while it is not watched). */
    boolean isDead(long nowMs) {
        Long deadline = deadlineMs();
        return deadline != null && nowMs >= deadline;
    }

    /** How long nothing has arrived (0 while not watched). */
    long silenceMs(long nowMs) { return heardAtMs == null ? 0 : nowMs - heardAtMs; }
}
