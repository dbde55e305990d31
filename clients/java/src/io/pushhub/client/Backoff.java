package io.pushhub.client;

/**
 * Exponential backoff with full jitter (docs/clients.md "Reconnect"): attempt n waits a random
 * 0..min(cap, initial × 2ⁿ). Immutable; the default is 500 ms doubling to 30 s, the other
 * clients' schedule.
 */
public final class Backoff {
    public static final Backoff DEFAULT = new Backoff(500, 30_000);

    private final long initialMs;
    private final long capMs;

    /** @throws IllegalArgumentException unless {@code 0 < initialMs <= capMs} */
    public Backoff(long initialMs, long capMs) {
        if (initialMs <= 0 || capMs < initialMs) {
            throw new IllegalArgumentException("Backoff needs 0 < initialMs <= capMs, got " + initialMs + ", " + capMs);
        }
        this.initialMs = initialMs;
        this.capMs = capMs;
    }

    public long initialMs() { return initialMs; }

    public long capMs() { return capMs; }

    /** The same schedule with its ceiling lowered to {@code capMs} (never raised). */
    Backoff cappedAt(long capMs) {
        return capMs >= this.capMs ? this : new Backoff(Math.min(initialMs, capMs), capMs);
    }

    /** The ceiling of attempt {@code attempt}'s window (0-based). */
    public long ceilingMs(int attempt) {
        int doublings = Math.min(Math.max(attempt, 0), 30);
        long grown = initialMs << doublings;
        return grown < capMs && grown > 0 ? grown : capMs;
    }

    /** The delay of attempt {@code attempt} for a uniform {@code random} in [0, 1). */
    public long delayMs(int attempt, double random) {
        return (long) Math.floor(ceilingMs(attempt) * random);
    }
}
