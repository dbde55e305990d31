// When to reconnect after a drop (docs/clients.md "Reconnect"), and the close codes that decide it.

/** Close codes the hub sends (docs/protocol.md); any other code is passed through as is. */
export const CloseCodes = Object.freeze({
  normal: 1000,
  goingAway: 1001, // the hub shuts down: reconnect
  abnormal: 1006, // no close frame (network drop, refused upgrade, hub killed): reconnect
  policyViolation: 1008, // hello timeout, unauthorized, rate or outbound limit: reconnect with backoff
  messageTooBig: 1009,
});

/**
 * The reconnect schedule (docs/clients.md "Reconnect"): attempt n since the last welcome waits a
 * random 0..min(maxMs, initialMs × 2^n) (full jitter). A close 1001 (the hub restarts) starts over
 * at attempt 0, and for goingAwayWindowMs after it the ceiling stops at goingAwayMaxMs, so a page
 * is back within about that long of the hub's return.
 */
export const DEFAULT_BACKOFF = Object.freeze({ initialMs: 500, maxMs: 30000, goingAwayMaxMs: 4000, goingAwayWindowMs: 60000 });

/** The delay of reconnect attempt `attempt` (0-based) for a uniform `random` in [0, 1). */
export function reconnectDelay(backoff, attempt, restarting, random) {
  const cap = restarting ? Math.min(backoff.maxMs, backoff.goingAwayMaxMs) : backoff.maxMs;
  return Math.floor(random * Math.min(cap, backoff.initialMs * 2 ** Math.min(attempt, 30)));
}

/**
 * The delays between reconnect attempts (`DEFAULT_BACKOFF` explains them). Pure: the caller
 * passes the time (`now`, milliseconds of a clock that does not jump) and the random number.
 *
 * Invariant: `attempt` counts the delays handed out since the last welcome or close 1001.
 */
export class ReconnectSchedule {
  constructor(backoff) {
    this.backoff = backoff;
    this.attempt = 0;
    this._goingAwayAt = null; // when the hub last closed with 1001 (restarting), until the next welcome
  }

  /** A session started: the next drop starts from the first step. */
  welcomed() {
    this.attempt = 0;
    this._goingAwayAt = null;
  }

  /** The connection closed with `code` at `now`: the delay (ms) before the next attempt. */
  dropped(code, now, random) {
    if (code === CloseCodes.goingAway) {
      // The hub is restarting (or draining to another): it is expected back soon, so retry from
      // the first step again, with the short ceiling of a restart.
      this._goingAwayAt = now;
      this.attempt = 0;
    }
    const restarting = this._goingAwayAt !== null && now - this._goingAwayAt < this.backoff.goingAwayWindowMs;
    const delayMs = reconnectDelay(this.backoff, this.attempt, restarting, random);
    this.attempt++;
    return delayMs;
  }
}
