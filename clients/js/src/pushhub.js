// PushHub: the client apps use (DESIGN §12, docs/clients.md). It performs what ClientSession
// decides, over a Transport, with the app's storage, timers and listeners.

import { TreeHasher } from "./screen-hash.js";
import {
  defaultStorage, handledSyncsKey, LEGACY_LAST_SYNC_KEY, PUSH_TOKEN_KEY, readHandledSyncs, readScopeRecord, recordKey,
  storageScope, storedDevice,
} from "./storage.js";
import { pushedSync } from "./pushed-sync.js";
import { fetchScreenAs } from "./fetch-screen.js";
import { DEFAULT_BACKOFF } from "./reconnect-schedule.js";
import { Transport } from "./transport.js";
import { ClientSession, pushTokenMessage } from "./client-session.js";

/** Milliseconds from a clock that does not jump with the wall clock (performance.now where present). */
function monotonicNow() {
  const p = globalThis.performance;
  return p && typeof p.now === "function" ? p.now() : Date.now();
}

/**
 * One connection to a hub, kept up until `close()`. See pushhub-client.d.ts for the options,
 * events and the meaning of each field.
 *
 * Invariants: every rule of the protocol is `ClientSession`'s, every socket and timer of the link
 * the `Transport`'s; this class only performs their actions. Hub messages are handled strictly in
 * arrival order although hashing is asynchronous: each is a task on one promise chain that waits
 * for the message's `verify` (a task of an older socket is skipped).
 */
export class PushHub {
  constructor(options) {
    if (!options || typeof options.url !== "string") throw new TypeError("PushHub needs { url: 'wss://host/v1/connect' }");
    this.url = options.url;
    this._options = options;
    const WebSocket = options.WebSocket || globalThis.WebSocket;
    if (typeof WebSocket !== "function") throw new TypeError("no WebSocket here: pass options.WebSocket");
    this._storage = options.storage || defaultStorage();
    this._prefix = (options.storageKey || "pushhub") + ":";
    this._random = options.random || Math.random;
    this._autoRendered = options.autoRendered !== false;
    this._hasher = new TreeHasher({ builtIn: options.hash === "built-in" });
    this._session = new ClientSession({
      app: options.app, components: options.components, canonical: (tree) => this._hasher.canonical(tree),
    });
    this._transport = new Transport({
      url: options.url, WebSocket, now: options.now || monotonicNow, random: this._random,
      backoff: { ...DEFAULT_BACKOFF, ...(options.backoff || {}) }, stats: this._session.stats,
    }, {
      reconnect: () => this._open(),
      opened: () => this._perform(this._session.opened({ token: this._token, device: this._device })),
      received: (data, generation) => this._received(data, generation),
      dropped: (code, reason) => this._dropped(code, reason),
      connectFailed: (error) => this._emit("error", { code: "connect", message: String(error), ref: null }),
    });
    this._state = "connecting";
    this._listeners = new Map(); // event type → Set of listeners
    this._treeListeners = new WeakMap(); // screen entry → Set of onTree callbacks
    this._syncHandlers = new Set();
    this._syncTimers = new Set(); // syncs waiting out their jitter
    this._pushWaits = new Set(); // handlePush promises' resolvers, until their sync was handled
    this._queue = Promise.resolve(); // the in-order task chain of hub messages
    this._token = undefined; // the token of the current connection
    this._fatal = null; // an error after which reconnecting cannot help
    this._scoped = new Promise((resolve) => (this._enteredScope = resolve)); // resolved once a scope is known
    this._ready = this._prepare();
    this._open();
  }

  /** "connecting" (first connection), "live" (welcomed), "reconnecting" (waiting or retrying), "closed". */
  get state() {
    return this._state;
  }

  /** The last `sync` seq this client has fully handled (sent as hello.last_sync). */
  get lastSync() {
    return this._session.lastSync;
  }

  /** `welcome` of the current session: { session, user, heartbeat_s, sync_seq, epoch }; null while not live. */
  get session() {
    return this._session.welcome;
  }

  /** Counters for the app's diagnostics (and the tests). */
  get stats() {
    return this._session.stats;
  }

  /** Listens to an event ("state", "welcome", "close", "error", "pending", "resubscribe", "mismatch", "gone"); returns an unsubscribe function. */
  on(type, listener) {
    if (!this._listeners.has(type)) this._listeners.set(type, new Set());
    this._listeners.get(type).add(listener);
    return () => this._listeners.get(type).delete(listener);
  }

  /** Registers a sync handler, called after the random 0..jitter_ms wait; the sync is acked once every handler returned (or its promise settled). */
  onSync(handler) {
    this._syncHandlers.add(handler);
    return () => this._syncHandlers.delete(handler);
  }

  /**
   * Subscribes to a screen. `onTree(tree, { version, hash, source, variants })` is called with
   * each new tree: `source` is "cache" (from storage, before the hub confirmed it), "snapshot",
   * "patch" or "unchanged" (the cached tree is current); `variants` is `{experiment: variant}` for
   * the running experiments that shaped this tree for this client (`{}` when none); a change of
   * variants alone calls `onTree` again with the same tree. Trees are frozen (the client reuses the canonical
   * form of unchanged subtrees); a patch copies only the containers on its paths, so unchanged
   * subtrees keep their identity from one version to the next.
   *
   * `onTree` throwing (or its promise rejecting) for a tree the hub sent (not "cache") reports a
   * `render_error` for that version instead of `rendered` (DESIGN §15); the other callbacks still
   * run, and the error still surfaces in the console.
   */
  subscribe(screen, onTree) {
    let entry = this._session.screens.get(screen);
    if (!entry) {
      const actions = this._session.subscribe(screen);
      entry = this._session.screens.get(screen);
      this._treeListeners.set(entry, new Set());
      this._perform(actions);
    } else if (entry.tree !== undefined && onTree) {
      const meta = {
        version: entry.version, hash: entry.hash, source: entry.delivered === undefined ? "cache" : "snapshot", variants: entry.variants,
      };
      const listeners = this._treeListeners.get(entry);
      // Drawn before: no `rendered` again, but a failure to draw it here is reported.
      Promise.resolve().then(() => listeners.has(onTree) && this._render(entry, [onTree], entry.tree, meta, false));
    }
    const listeners = this._treeListeners.get(entry);
    if (onTree) listeners.add(onTree);
    const hub = this;
    return {
      screen,
      get tree() { return entry.tree; },
      get version() { return entry.version; },
      get hash() { return entry.hash; },
      get variants() { return entry.variants; },
      get pending() { return entry.pending; },
      close() {
        listeners.delete(onTree);
        if (listeners.size > 0 || hub._session.screens.get(screen) !== entry) return;
        hub._perform(hub._session.unsubscribe(screen));
      },
    };
  }

  /**
   * `fetchScreen(name)` as this client (its token, device, app, components and storage): an HTTP GET of the
   * screen with `If-None-Match` the hash this client holds. Needs no live connection; a
   * subscription keeps following the socket (the fetched tree goes to storage only).
   */
  async fetchScreen(screen, { signal } = {}) {
    await this._ready;
    let token = this._options.token;
    if (typeof token === "function") token = await token();
    const entry = this._session.screens.get(screen);
    const held = entry && entry.tree !== undefined && entry.hash !== undefined
      ? { tree: entry.tree, version: entry.version, hash: entry.hash, variants: entry.variants } : undefined;
    await this._scoped;
    return fetchScreenAs(screen, {
      url: this.url, token, device: this._device, app: this._options.app, components: this._session.components,
      storage: this._storage, prefix: this._prefix,
      scope: this._session.scope, epoch: this._session.epoch, held, fetch: this._options.fetch, signal,
    });
  }

  /** Tells the hub the app drew `version` of `screen` (confirms experiment exposures, DESIGN §6). */
  rendered(screen, version) {
    this._perform(this._session.rendered(screen, version));
  }

  /**
   * Tells the hub the app could not draw `version` of `screen` (DESIGN §15: it counts against a
   * release's guard): a `render_error` with `error.component` (when a string) and
   * `String(error.message ?? error)` cut to 1000 characters, and the tree's hash when this client
   * holds that version. For errors the app catches itself; a throwing `onTree` is reported
   * without it. While not live it is sent after the next welcome (with `rendered`: the latest
   * report per screen). Throws a TypeError unless `screen` is a string and `version` an integer.
   */
  renderFailed(screen, version, error) {
    this._perform(this._session.renderFailed(screen, version, error));
  }

  /**
   * Reports a goal event for experiment results (DESIGN §6): `event` is 1–64 characters of
   * `A–Z a–z 0–9 _ . : -`, `value` (optional) a finite number, e.g. `track("purchase", 12.5)`;
   * anything else throws a TypeError. While not live, up to 100 wait and go after the next
   * welcome (the oldest are dropped beyond; `stats.tracksDropped`); once closed for good
   * (`close()`, or an error reconnecting cannot fix) they are dropped and counted.
   */
  track(event, value) {
    this._perform(this._session.track(event, value));
  }

  /**
   * Registers the device's push token for the hub's silent-push fallback (DESIGN §17):
   * `{ provider: "apns", token, topic }` (token: the device token as hex, topic: the app's bundle
   * id) or `{ provider: "fcm", token }`; null removes it (sign-out). Sent at once when live and
   * after every welcome, kept in storage so that a restart sends it again; the same token again
   * changes nothing. A client with a token but no `device` gets one generated and kept (the hub
   * keeps push tokens per user and device), and reconnects at once if it was connected without
   * one. Throws a TypeError for anything else; returns a promise settled once it is handled.
   */
  setPushToken(token) {
    pushTokenMessage(token); // a bad token throws here, at the call
    return this._ready.then(async () => {
      if (token && !this._device && this._state !== "closed") {
        this._device = await storedDevice(this._storage, this._prefix);
        if (this._transport.socket) this._restart(); // its hello named no device
      }
      this._perform(this._session.setPushToken(token));
    });
  }

  /**
   * Hands the sync a silent push carries (DESIGN §17) to the `onSync` handlers, as one from the
   * socket but without the jitter wait: APNs userInfo (`{ aps, pushhub: { type: "sync", … } }`),
   * an FCM data map (`{ pushhub: "<the sync as JSON text>" }`), or a React Native module's
   * message wrapping either in `data`. Each sync id reaches the app once, whichever way came first
   * (the last 64 handled are kept in storage); a push does not move last_sync, so the syncs the
   * socket missed are still replayed; the sync is acked like any (after the next welcome when not
   * live). Resolves to false at once for a push that is not PushHub's, else to true once the
   * handlers settled (at once for a sync handed over already): finish a background task there.
   */
  handlePush(payload) {
    const message = pushedSync(payload);
    if (!message) return Promise.resolve(false);
    return this._ready.then(() => this._scoped).then(() => new Promise((resolve) => {
      const actions = this._state === "closed" ? [] : this._session.pushed(message);
      const scheduled = actions.find((action) => action.type === "schedule");
      if (!scheduled) return resolve(true);
      const done = () => {
        this._pushWaits.delete(done);
        resolve(true);
      };
      this._pushWaits.add(done);
      scheduled.handled = done;
      this._perform(actions);
    }));
  }

  /** Closes the connection for good; state becomes "closed". */
  close() {
    if (this._state === "closed") return;
    this._transport.stop();
    for (const timer of this._syncTimers) clearTimeout(timer);
    this._syncTimers.clear();
    for (const done of this._pushWaits) done();
    this._session.end();
    this._setState("closed");
    this._emit("close", { code: 1000, reason: "closed by the app", reconnect: false });
  }

  // MARK: connection

  /** The device id, the legacy key removed, and (with a fixed token or none) the user's scope entered. */
  async _prepare() {
    this._device = this._options.device;
    const pushToken = await this._storedPushToken();
    if (!this._device && (!this._options.token || pushToken)) this._device = await storedDevice(this._storage, this._prefix);
    this._perform(this._session.setPushToken(pushToken));
    this._storageCall(() => this._storage.removeItem(this._prefix + LEGACY_LAST_SYNC_KEY));
    if (typeof this._options.token !== "function") await this._enterScope(storageScope(this._options.token, this._device));
  }

  /** The push token kept in storage, null when none (or unreadable). */
  async _storedPushToken() {
    try {
      const token = JSON.parse((await this._read(PUSH_TOKEN_KEY)) || "null");
      return token === null ? null : (pushTokenMessage(token), token);
    } catch {
      return null;
    }
  }

  /** Replaces the connection at once (the hello must name the device now). */
  _restart() {
    this._session.closed();
    this._setState("reconnecting");
    this._transport.restart();
  }

  /** Makes `scope` the one whose storage the client uses: its record and handled syncs read, each subscribed screen loaded from it. */
  async _enterScope(scope) {
    const record = await readScopeRecord(this._storage, this._prefix + recordKey(scope));
    record.handled = await readHandledSyncs(this._storage, this._prefix + handledSyncsKey(scope));
    this._perform(this._session.enter(scope, record));
    this._enteredScope();
  }

  /** A connection attempt: the token (a function is asked each time, naming the user), then the socket. */
  async _open() {
    const generation = this._transport.begin();
    await this._ready;
    let token = this._options.token;
    if (typeof token === "function") {
      try {
        token = await token();
      } catch (error) {
        if (this._transport.isCurrent(generation)) this._emit("error", { code: "token", message: String(error), ref: null });
        token = undefined;
      }
      // The user the token names (a failed call keeps the current one).
      const scope = token ? storageScope(token, this._device) : this._session.scope;
      if (scope !== this._session.scope && this._transport.isCurrent(generation)) await this._enterScope(scope);
    }
    if (!this._transport.isCurrent(generation)) return;
    this._token = token;
    this._transport.connect(generation);
  }

  _received(data, generation) {
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      return this._emit("error", { code: "client_bad_json", message: "the hub sent text that is not JSON", ref: null });
    }
    if (message.type === "heartbeat") return; // it only proves the link is alive
    this._queue = this._queue
      .then(() => (this._transport.isCurrent(generation) ? this._perform(this._session.receive(message)) : undefined))
      .catch((error) => this._report(error));
  }

  _dropped(code, reason) {
    this._session.closed();
    if (this._fatal) {
      this._session.end();
      this._transport.stop();
      this._setState("closed");
      return this._emit("close", { code, reason, reconnect: false, error: this._fatal });
    }
    const { delayMs, attempt } = this._transport.reconnectLater(code);
    this._setState("reconnecting");
    this._emit("close", { code, reason, reconnect: true, delayMs, attempt });
  }

  // MARK: actions (ClientSession's table)

  /** Performs `actions` in order; returns the verification in flight, if one was asked for. */
  _perform(actions) {
    let verifying;
    for (const action of actions) {
      switch (action.type) {
        case "send":
          if (!this._transport.send(action.message)) this._session.unsent(action.message);
          break;
        case "store":
          this._store(action.key, action.value);
          break;
        case "load":
          this._load(action).catch((error) => this._report(error));
          break;
        case "verify":
          verifying = this._verify(action);
          break;
        case "deliver":
          this._deliver(action);
          break;
        case "schedule":
          this._schedule(action);
          break;
        case "emit":
          this._emit(action.event, action.detail);
          break;
        case "goLive":
          this._transport.welcomed(action.heartbeatS, action.hubSendsHeartbeats);
          this._fatal = null;
          this._setState("live");
          this._emit("welcome", action.welcome);
          break;
        case "stopReconnecting":
          // A token function is asked for a fresh token on the next attempt.
          if (!(action.error.code === "unauthorized" && typeof this._options.token === "function")) this._fatal = action.error;
          break;
        default:
          throw new Error(`ClientSession asked for an unknown action ${JSON.stringify(action.type)}`);
      }
    }
    return verifying;
  }

  async _load({ key, load }) {
    const text = await this._read(key);
    await this._perform(this._session.loaded(load, text));
  }

  async _verify({ tree, verification }) {
    let result;
    try {
      result = await this._hasher.hash(tree);
    } catch (error) {
      this._report(error);
      return this._perform(this._session.verifyFailed(verification));
    }
    return this._perform(this._session.verified(verification, result.hash, result.canonical));
  }

  _deliver({ entry, tree, meta }) {
    this._render(entry, [...this._treeListeners.get(entry)], tree, meta, this._autoRendered);
  }

  /**
   * Calls `listeners` with `tree`. Once each returned (or its promise settled), and if the tree is
   * one the hub sent (not "cache") and the screen still holds that version: the first failure
   * is reported as a `render_error`; with none, `confirm` sends `rendered`.
   */
  _render(entry, listeners, tree, meta, confirm) {
    const outcomes = listeners.map((listener) => this._draw(listener, tree, meta));
    if (meta.source === "cache") return;
    Promise.all(outcomes).then((failures) => {
      if (entry.version !== meta.version || this._session.screens.get(entry.screen) !== entry) return;
      const failure = failures.find((outcome) => outcome !== null);
      if (failure) this._perform(this._session.renderFailed(entry.screen, meta.version, failure.error, meta.hash));
      else if (confirm) this.rendered(entry.screen, meta.version);
    });
  }

  /** Calls a tree listener: null when it returned (a promise of null once its promise resolved), else `{ error }` (surfaced too). */
  _draw(listener, tree, meta) {
    const failed = (error) => {
      this._report(error);
      return { error };
    };
    try {
      const result = listener(tree, meta);
      return result && typeof result.then === "function" ? Promise.resolve(result).then(() => null, failed) : null;
    } catch (error) {
      return failed(error);
    }
  }

  _schedule({ sync: received, waiting, handled }) {
    const delayMs = Math.floor(this._random() * (received.jitterMs || 0));
    const sync = { ...received, delayMs, receivedAt: Date.now() };
    const timer = setTimeout(async () => {
      this._syncTimers.delete(timer);
      await Promise.all([...this._syncHandlers].map((handler) => this._call(handler, sync)));
      if (this._state !== "closed") this._perform(this._session.syncHandled(waiting));
      if (handled) handled();
    }, delayMs);
    this._syncTimers.add(timer);
  }

  _setState(state) {
    if (this._state === state) return;
    this._state = state;
    this._emit("state", { state });
  }

  _emit(type, event) {
    for (const listener of this._listeners.get(type) || []) this._call(listener, event);
  }

  _call(fn, ...args) {
    try {
      const result = fn(...args);
      return result && typeof result.then === "function" ? result.catch((error) => this._report(error)) : result;
    } catch (error) {
      this._report(error);
    }
  }

  _report(error) {
    setTimeout(() => { throw error; }); // surfaces in the console without breaking the client
  }

  // MARK: storage (keys relative to the storageKey prefix)

  async _read(key) {
    try {
      return await this._storage.getItem(this._prefix + key);
    } catch (error) {
      this._emit("error", { code: "storage", message: String(error), ref: null });
      return null;
    }
  }

  _store(key, value) {
    const full = this._prefix + key;
    this._storageCall(() => (value === null ? this._storage.removeItem(full) : this._storage.setItem(full, value)));
  }

  _storageCall(operation) {
    const fail = (error) => this._emit("error", { code: "storage", message: String(error), ref: null });
    try {
      const result = operation();
      if (result && typeof result.then === "function") result.catch(fail);
    } catch (error) {
      fail(error);
    }
  }
}
