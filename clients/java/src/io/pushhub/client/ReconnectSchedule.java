package io.pushhub.client;

/**
 * When to reconnect after a drop (docs/clients.md "Reconnect"): attempt n since the last welcome
 * waits a random 0..min(cap, initial × 2ⁿ) ({@link Backoff}, full jitter). A close 1001 means the
 * hub is restarting and expected back soon: the schedule starts over at attempt 0, and for
 * {@code goingAwayWindowMs} after that close the ceiling stops at {@code goingAwayCapMs}, so the
 * client is back within about that long of the hub's return instead of waiting out a ceiling
 * grown while the hub was down. Pure: the caller passes {@code nowMs} and the random number.
 *
 * <p>Invariant: {@code attempt} counts the delays handed out since the last welcome or 1001.
 */
final class ReconnectSchedule {
    static final int GOING_AWAY = 1001;

    private final Backoff backoff;
    private final long goingAwayCapMs;
    private final long goingAwayWindowMs;
    private int attempt;
    private Long goingAwayAtMs;

    ReconnectSchedule(Backoff backoff, long goingAwayCapMs, long goingAwayWindowMs) {
        this.backoff = backoff;
        this.goingAwayCapMs = goingAwayCapMs;
        this.goingAwayWindowMs = goingAwayWindowMs;
    }

    int attempt() { return attempt; }

    /** A session started: the next drop starts from the first step. */
    void welcomed() {
        attempt = 0;
        goingAwayAtMs = null;
    }

    /** The connection closed with {@code code} at {@code nowMs}: the delay before the next attempt. */
    long dropped(int code, long nowMs, double random) {
        if (code == GOING_AWAY) {
            goingAwayAtMs = nowMs;
            attempt = 0;
        }
        Backoff steps = backoff;
        boolean restarting = goingAwayAtMs != null && nowMs - goingAwayAtMs < goingAwayWindowMs;
        if (restarting) steps = backoff.cappedAt(goingAwayCapMs);
        long delay = steps.delayMs(attempt, random);
        attempt++;
        return delay;
    }
}
