// The client's rule for a dead link (docs/protocol.md "Heartbeats", docs/clients.md).

/** `heartbeat_s` until a welcome says otherwise (the hub's default ping interval, docs/protocol.md). */
export const DEFAULT_HEARTBEAT_S = 25;

/**
 * Whether the link to the hub is dead. A client that asks for heartbeats (`hello.heartbeat`) gets
 * something from the hub at least every `heartbeat_s` (a `heartbeat`, or what the hub had
 * queued), so when nothing at all arrived for 2 × heartbeat_s + 2 s the link is dead — a dropped
 * NAT mapping, a hub gone without a FIN — and the client stops using it. Pure: the caller passes
 * `now` (milliseconds of a clock that does not jump) and arms one timer for `deadline`.
 *
 * Invariant: `deadline` is undefined exactly while there is no connection, or the connection's hub
 * sends no heartbeats (a hub from before them names no epoch in its welcome, and sends pings only,
 * which a page cannot see: its silence proves nothing); it only moves later as messages arrive,
 * so a timer armed for an earlier deadline checks again and re-arms.
 */
export class LinkLiveness {
  constructor() {
    this.heartbeatS = DEFAULT_HEARTBEAT_S; // the last welcome's heartbeat_s
    this._heardAt = undefined; // when the current connection last brought anything
  }

  /** How long a link may be silent: two heartbeats and 2 s for the network's jitter. */
  get limitMs() {
    return (2 * this.heartbeatS + 2) * 1000;
  }

  /** When the link is dead if nothing arrives before; undefined while it is not watched. */
  get deadline() {
    return this._heardAt === undefined ? undefined : this._heardAt + this.limitMs;
  }

  /** A socket is being opened: the same limit covers its handshake and the welcome. */
  connecting(now) {
    this._heardAt = now;
  }

  /** Something arrived (any text, JSON or not). */
  heard(now) {
    if (this._heardAt !== undefined) this._heardAt = now;
  }

  /**
   * The welcome named the hub's interval, and whether that hub sends heartbeats at all (no: the
   * link is not watched until the next connection). Returns whether `deadline` changed (re-arm).
   */
  welcomed(heartbeatS, hubSendsHeartbeats, now) {
    if (!hubSendsHeartbeats) {
      this._heardAt = undefined;
      return true;
    }
    if (!(Number.isFinite(heartbeatS) && heartbeatS > 0) || heartbeatS === this.heartbeatS) return false;
    this.heartbeatS = heartbeatS;
    this._heardAt = now;
    return true;
  }

  /** The connection is gone. */
  closed() {
    this._heardAt = undefined;
  }

  /** Whether the link is dead at `now` (never while it is not watched). */
  isDead(now) {
    const deadline = this.deadline;
    return deadline !== undefined && now >= deadline;
  }

  /** How long nothing has arrived, in ms (0 while not watched). */
  silenceMs(now) {
    return this._heardAt === undefined ? 0 : now - this._heardAt;
  }
}
