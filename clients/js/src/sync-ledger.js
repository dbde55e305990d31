// Which syncs a client has seen and handed over, and the last_sync that follows (DESIGN §5).

/** How many sync ids are remembered for dedupe (a replay after a reconnect repeats some). */
const MAX_REMEMBERED_SYNCS = 1000;

/**
 * The syncs of one user in one hub state: ids seen (to drop a duplicate, e.g. a replay after a
 * reconnect), syncs handed to the shell that wait for the app, and `lastSync`. Pure.
 *
 * Invariant: `lastSync` never passes a sync that was received but not yet handled: a reload
 * during a jitter wait gets that sync again (deduped by id while the page lives).
 */
export class SyncLedger {
  constructor() {
    /** The last sync seq every sync up to which was handed to the app (hello.last_sync). */
    this.lastSync = undefined;
    this._max = undefined; // the highest seq seen; lastSync lags it while syncs wait
    this._seen = new Map(); // id → seq, the last MAX_REMEMBERED_SYNCS
    this._waiting = new Map(); // id → { id, seq, forgotten }
  }

  /**
   * Another user or hub state, whose last_sync is `lastSync`: the ids seen are forgotten (another
   * state numbers its own from 1 again), and the syncs still waiting are handed to the app when
   * their wait ends but never acked, nor bound last_sync here.
   */
  reset(lastSync) {
    this._seen.clear();
    for (const waiting of this._waiting.values()) {
      waiting.forgotten = true;
      waiting.seq = undefined;
    }
    this.lastSync = this._max = lastSync;
  }

  /** The welcome's `sync_seq`: where a client with no last_sync starts counting. */
  welcomed(syncSeq) {
    if (this._max === undefined && typeof syncSeq === "number") this._max = syncSeq;
  }

  /** A sync arrived: its waiting record, or null for an id seen already. */
  received(id, seq) {
    if (this._seen.has(id)) return null;
    this._seen.set(id, seq);
    if (this._seen.size > MAX_REMEMBERED_SYNCS) this._seen.delete(this._seen.keys().next().value);
    if (typeof seq === "number" && !(this._max >= seq)) this._max = seq;
    const waiting = { id, seq, forgotten: false };
    this._waiting.set(id, waiting);
    return waiting;
  }

  /** The app's handlers returned for `waiting`: whether to ack it (not when it was reset or replaced meanwhile). */
  handled(waiting) {
    if (this._waiting.get(waiting.id) !== waiting) return false;
    this._waiting.delete(waiting.id);
    return !waiting.forgotten;
  }

  /**
   * Moves `lastSync` to the highest seq below which nothing waits (a replay below it, after a
   * first welcome or a reset, lowers it until handled). Returns whether it changed.
   */
  settle() {
    let value = this._max;
    for (const waiting of this._waiting.values()) {
      if (typeof waiting.seq === "number" && waiting.seq - 1 < value) value = waiting.seq - 1;
    }
    if (value === this.lastSync) return false;
    this.lastSync = value;
    return true;
  }
}
