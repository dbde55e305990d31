// Which syncs a client has seen and handed over, and the last_sync that follows (DESIGN §5).

/** How many sync ids are remembered for dedupe (a replay after a reconnect repeats some). */
const MAX_REMEMBERED_SYNCS = 1000;

/** How many ids of handled syncs are kept in storage (`<scope>:syncs`): the socket and a push hand each sync over once, across restarts too. */
export const MAX_HANDLED_SYNCS = 64;

/**
 * The syncs of one user in one hub state: ids seen (to drop a duplicate, e.g. a replay after a
 * reconnect), syncs handed to the shell that wait for the app, and `lastSync`. Pure.
 *
 * Invariants: `lastSync` never passes a sync that was received but not yet handled: a reload
 * during a jitter wait gets that sync again (deduped by id while the page lives). A sync from a
 * push (DESIGN §17) never moves it: only the socket's copy of it does (then deduped), so syncs
 * the socket missed are still replayed. Each id is handed over once, whichever way it came.
 */
export class SyncLedger {
  constructor() {
    /** The last sync seq every sync up to which was handed to the app (hello.last_sync). */
    this.lastSync = undefined;
    this._max = undefined; // the highest seq seen; lastSync lags it while syncs wait
    this._seen = new Map(); // id → seq, the last MAX_REMEMBERED_SYNCS
    this._waiting = new Map(); // id → { id, seq, forgotten } (seq undefined: from a push the socket has not brought)
    /** The ids of the last MAX_HANDLED_SYNCS syncs handled, oldest first (as stored). */
    this.handledIds = [];
  }

  /**
   * Another user or hub state, whose last_sync is `lastSync`: the ids seen are forgotten (another
   * state numbers its own from 1 again), and the syncs still waiting are handed to the app when
   * their wait ends but never acked, nor bound last_sync here.
   */
  reset(lastSync, handled = []) {
    this._seen.clear();
    this.handledIds = handled.slice(-MAX_HANDLED_SYNCS);
    for (const id of this.handledIds) this._seen.set(id, undefined);
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
    if (this._seen.has(id)) {
      // Seen in a push (or handled before a restart): last_sync may pass it now, or once the app
      // returns for a push still waiting.
      const waiting = this._waiting.get(id);
      if (waiting && waiting.seq === undefined && !waiting.forgotten) waiting.seq = seq;
      if (typeof seq === "number" && !(this._max >= seq)) this._max = seq;
      return null;
    }
    this._seen.set(id, seq);
    if (this._seen.size > MAX_REMEMBERED_SYNCS) this._seen.delete(this._seen.keys().next().value);
    if (typeof seq === "number" && !(this._max >= seq)) this._max = seq;
    const waiting = { id, seq, forgotten: false };
    this._waiting.set(id, waiting);
    return waiting;
  }

  /** A sync came in a push: its waiting record (it holds last_sync back only once the socket brings it too), or null for an id seen already. */
  pushed(id) {
    if (this._seen.has(id)) return null;
    this._seen.set(id, undefined);
    if (this._seen.size > MAX_REMEMBERED_SYNCS) this._seen.delete(this._seen.keys().next().value);
    const waiting = { id, seq: undefined, forgotten: false };
    this._waiting.set(id, waiting);
    return waiting;
  }

  /** The app's handlers returned for `waiting`: whether to ack it (not when it was reset or replaced meanwhile); its id joins `handledIds`. */
  handled(waiting) {
    if (this._waiting.get(waiting.id) !== waiting) return false;
    this._waiting.delete(waiting.id);
    if (waiting.forgotten) return false;
    this.handledIds.push(waiting.id);
    if (this.handledIds.length > MAX_HANDLED_SYNCS) this.handledIds.shift();
    return true;
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
