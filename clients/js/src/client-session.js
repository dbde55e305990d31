// The client side of protocol v1 as a state machine (DESIGN §3–§5, §12): hub messages and app
// calls in, actions out. The JavaScript twin of Sources/PushHubClient/ClientSession.swift.

import { applyPatch } from "./json-patch.js";
import { canonicalize } from "./canonical-json.js";
import { checkedComponents } from "./component-capabilities.js";
import { renderErrorMessage } from "./render-error.js";
import {
  handledSyncsKey, NO_VARIANTS, PUSH_TOKEN_KEY, recordKey, scopeRecord, screenKey, storedScreen, variantMap,
} from "./storage.js";
import { SyncLedger } from "./sync-ledger.js";

export const PROTOCOL = 1;

/** How many `track` messages wait while the client is not live; beyond, the oldest is dropped. */
export const TRACK_QUEUE_LIMIT = 100;

/** A track's event name (docs/protocol.md "track"): 1–64 of A–Z a–z 0–9 _ . : - */
const TRACK_EVENT = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * The protocol rules of one client, with no socket, timer, clock, storage or hashing of its own:
 * each input (a hub message, an app call, the result of an action) returns the actions its shell
 * (`PushHub`) performs, in order:
 *
 * | action | the shell |
 * |---|---|
 * | `{ type: "send", message }` | sends it; if the socket cannot take it, calls `unsent(message)` |
 * | `{ type: "store", key, value }` | writes `<storageKey>:key` (removes it when `value` is null) |
 * | `{ type: "load", key, load }` | reads `<storageKey>:key`, then calls `loaded(load, text)` |
 * | `{ type: "verify", tree, verification }` | hashes `tree` (SHA-256 of its RFC 8785 form), then calls `verified(verification, hash, canonical)` (`verifyFailed(verification)` if it cannot); the next hub message waits for it |
 * | `{ type: "deliver", entry, screen, tree, meta }` | calls the screen's listeners; then, for a source other than "cache": `renderFailed` if one threw, else (with autoRendered) `rendered` |
 * | `{ type: "schedule", sync, waiting }` | hands `sync` to the app after its random 0..jitterMs wait, then calls `syncHandled(waiting)` |
 * | `{ type: "emit", event, detail }` | emits the event to the app's listeners |
 * | `{ type: "goLive", welcome, heartbeatS, hubSendsHeartbeats }` | a session started: reconnect schedule reset, link watched at `heartbeatS`, state "live", `welcome` event |
 * | `{ type: "stopReconnecting", error }` | reconnecting cannot help after this error (unless the token can be refreshed) |
 *
 * Each subscribed screen has an entry: `{ screen, tree, version, hash, variants, delivered,
 * savedVersion, savedVariants, resyncing, pending, load, verifying }`. The shell may read entries,
 * never write them.
 *
 * Invariants:
 * - Everything read or stored is in one user's `scope`, and a stored tree or last_sync is used
 *   only in the hub state (`epoch`) it was counted in: another user's or another epoch's tree is
 *   never delivered or sent as `have`. Nothing is stored while no scope is known.
 * - An entry's `version`/`hash` describe its `tree` exactly (a tree checked against the hash, or
 *   the hub's snapshot, whose hash the hub vouches for), or are undefined while a resubscribe
 *   waits for its snapshot (`resyncing`: patches are ignored until it comes); a patch applies only
 *   to the version it says it is `from`.
 * - A screen is subscribed only once its stored tree was read (`load` is null): `have` is never
 *   missed because storage was slow, and never sent before a welcome named the epoch.
 * - A `verify` or `load` answered after what it was about changed (another user, the entry gone
 *   or reset) changes nothing.
 * - `lastSync` never passes a sync that was received but not yet handed to the app (SyncLedger).
 * - An entry's `variants` is a frozen `{experiment: variant}` map, `{}` when none: a snapshot's or
 *   an unchanged's (absent: `{}`), replaced by a patch's when the patch has one, kept otherwise
 *   (docs/protocol.md). The same object is kept while the map is the same, so a new object means
 *   a change (delivered, even with the same tree).
 * - At most `TRACK_QUEUE_LIMIT` tracks wait for a welcome (the oldest go first); they are sent
 *   as the user who tracked them, never as another; none waits once the client has `ended`.
 * - While not live, at most one render report (`rendered` or `render_error`) per screen is owed:
 *   the latest made. Owed reports go after the next welcome, to the user and hub state they were
 *   made in only (a version drawn for another user or state means nothing there).
 * - A sync reaches the app once per id, from the socket or a push (DESIGN §17); a push never moves
 *   last_sync (SyncLedger). The push token, when set, goes after every welcome.
 */
export class ClientSession {
  /**
   * `app`: `{ platform, version }` for the hello. `components`: what this build renders, for the
   * hello (see checkedComponents; a bad one throws a TypeError here). `canonical(tree)`: the
   * RFC 8785 form of a tree the shell hashed before (its TreeHasher's, which reuses unchanged
   * subtrees' forms).
   */
  constructor({ app, components, canonical = canonicalize } = {}) {
    this._app = app;
    /** What this build renders (a frozen checked copy), for every hello and fetch; undefined: not declared. */
    this.components = checkedComponents(components);
    this._canonical = canonical;
    /** The storage scope ("user:…" or "device:…") of the current user; undefined until entered. */
    this.scope = undefined;
    /** The hub state the scope's stored screens and last_sync belong to. */
    this.epoch = undefined;
    /** Screen name → entry. */
    this.screens = new Map();
    /** Whether the current connection was welcomed. */
    this.live = false;
    /** The current session's welcome `{ session, user, heartbeat_s, sync_seq, epoch }`, null while not live. */
    this.welcome = null;
    /** Counters for the app's diagnostics (the transport counts `connects` and `deadLinks`). */
    this.stats = {
      connects: 0, welcomes: 0, snapshots: 0, patches: 0, unchanged: 0, resubscribes: 0, syncs: 0, duplicateSyncs: 0,
      pending: 0, deadLinks: 0, epochChanges: 0, tracks: 0, tracksDropped: 0, pushedSyncs: 0,
    };
    this._syncs = new SyncLedger();
    this._pendingSubscribes = []; // screens whose subscribe awaits its first answer, in order
    this._owedReports = new Map(); // screen → its latest `rendered` or `render_error` message, sent once live
    this._pendingAcks = new Set();
    this._pendingTracks = []; // track messages waiting for a welcome, oldest first
    /** The device's push token message ({ type: "push_token", provider, token, topic? }), null when none. */
    this.pushToken = null;
    this._owesPushTokenRemoval = false; // removed while not live: `token: null` goes after the next welcome
    /** Whether the client was closed for good: it will not connect again. */
    this.ended = false;
  }

  /** The last sync seq every sync up to which was handed to the app (hello.last_sync). */
  get lastSync() {
    return this._syncs.lastSync;
  }

  /** Whether a stored screen may be shown and sent as `have`: it was stored in this scope's epoch. */
  isCurrent(saved) {
    return typeof saved.epoch === "string" && saved.epoch === this.epoch;
  }

  // MARK: - App calls

  /** Starts following `screen` (nothing when it is followed already): its stored tree is loaded first. */
  subscribe(screen) {
    if (this.screens.has(screen)) return [];
    const entry = {
      screen, tree: undefined, version: undefined, hash: undefined, variants: NO_VARIANTS, delivered: undefined,
      savedVersion: undefined, savedVariants: undefined, resyncing: false, pending: false, load: null, verifying: null,
    };
    this.screens.set(screen, entry);
    return this._startLoad(entry);
  }

  /** Stops following `screen` (its stored tree stays for the next subscribe). */
  unsubscribe(screen) {
    if (!this.screens.delete(screen) || !this.live) return [];
    return [send({ type: "unsubscribe", screen })];
  }

  /** The app drew `version` of `screen` (confirms experiment exposures, DESIGN §6). */
  rendered(screen, version) {
    return this._sendReport({ type: "rendered", screen, version });
  }

  /**
   * The app could not draw `version` of `screen` (DESIGN §15): `error` (anything thrown) becomes
   * a `render_error` (see renderErrorMessage) carrying `hash`, by default the held tree's when it
   * is that version. A TypeError (nothing sent) unless `screen` is a string and `version` an
   * integer. Sent at once while live; otherwise owed as `rendered` is.
   */
  renderFailed(screen, version, error, hash = this._heldHash(screen, version)) {
    if (typeof screen !== "string" || !Number.isInteger(version)) {
      throw new TypeError(`renderFailed: needs a screen name and an integer version (got ${describe(screen)}, ${describe(version)})`);
    }
    return this._sendReport(renderErrorMessage(screen, version, hash, error));
  }

  /**
   * The app reports a goal event (DESIGN §6 "Goals and results"): `event` 1–64 characters of
   * `A–Z a–z 0–9 _ . : -`, `value` absent or a finite number (else a TypeError, nothing sent).
   * Sent at once while live; otherwise queued (at most TRACK_QUEUE_LIMIT, the oldest dropped)
   * and sent after the next welcome; dropped once the client has ended.
   */
  track(event, value) {
    if (typeof event !== "string" || !TRACK_EVENT.test(event)) {
      throw new TypeError(`track: event must be 1–64 characters of A–Z a–z 0–9 _ . : - (got ${describe(event)})`);
    }
    if (value !== undefined && !(typeof value === "number" && Number.isFinite(value))) {
      throw new TypeError(`track: value must be a finite number or absent (got ${describe(value)})`);
    }
    const message = { type: "track", event };
    if (value !== undefined) message.value = value;
    this.stats.tracks++;
    if (this.ended) {
      this.stats.tracksDropped++; // nothing will send it
      return [];
    }
    if (this.live) return [send(message)];
    this._queueTrack(message);
    return [];
  }

  /**
   * The app set the device's push token ({ provider: "apns", token, topic } or { provider: "fcm",
   * token }), or removed it (null): stored, and sent at once while live, else after the next
   * welcome (and after every welcome while set). The same token again changes nothing. A
   * TypeError (nothing stored or sent) for anything else.
   */
  setPushToken(token) {
    const message = pushTokenMessage(token);
    if (JSON.stringify(message) === JSON.stringify(this.pushToken)) return [];
    const hadToken = this.pushToken !== null;
    this.pushToken = message;
    this._owesPushTokenRemoval = false;
    const actions = [{ type: "store", key: PUSH_TOKEN_KEY, value: message && JSON.stringify(message) }];
    if (message) {
      if (this.live) actions.push(send(message));
    } else if (hadToken) {
      if (this.live) actions.push(send(PUSH_TOKEN_REMOVAL));
      else this._owesPushTokenRemoval = true;
    }
    return actions;
  }

  /**
   * A silent push brought `message`, a sync object with a string `id` (DESIGN §17): scheduled at
   * once (no jitter: the app runs briefly in the background) unless its id was seen already;
   * last_sync does not move (the socket's copy of it moves it).
   */
  pushed(message) {
    const waiting = this._syncs.pushed(message.id);
    if (!waiting) {
      this.stats.duplicateSyncs++;
      return [];
    }
    this.stats.pushedSyncs++;
    return [{ type: "schedule", sync: syncOf(message, 0), waiting }];
  }

  /**
   * Makes `scope` the user whose storage is used, with its stored `record` ({ epoch, lastSync, handled }):
   * each subscribed screen is loaded again from it. What was held for the previous user is
   * forgotten, never delivered or sent as `have` for this one.
   */
  enter(scope, record) {
    if (scope === this.scope) return [];
    // Tracks queued for another user are that user's events (those queued before any user was known are this one's).
    if (this.scope !== undefined) this._pendingTracks = [];
    this.scope = scope;
    this.epoch = record.epoch;
    this._forgetOwed();
    this._syncs.reset(record.lastSync, record.handled);
    const actions = [];
    for (const entry of this.screens.values()) {
      forget(entry);
      actions.push(...this._startLoad(entry));
    }
    return actions;
  }

  // MARK: - Connection

  /** The socket opened: the hello (asking for heartbeats; with the epoch last_sync was counted in). */
  opened({ token, device }) {
    const hello = { type: "hello", protocol: PROTOCOL, heartbeat: true };
    if (token) hello.token = token;
    if (device) hello.device = device;
    if (this._app) hello.app = this._app;
    if (this.components !== undefined) hello.components = this.components;
    if (this.epoch !== undefined) hello.epoch = this.epoch;
    if (this.lastSync !== undefined) hello.last_sync = this.lastSync;
    return [send(hello)];
  }

  /** The socket closed (or was given up): what was in flight on it is void. */
  closed() {
    this.live = false;
    this.welcome = null;
    this._pendingSubscribes = [];
  }

  /**
   * The client was closed for good (`close()`, or an error reconnecting cannot fix): tracks
   * waiting are dropped (counted), and so are those made later.
   */
  end() {
    this.closed();
    this.ended = true;
    this.stats.tracksDropped += this._pendingTracks.length;
    this._pendingTracks = [];
  }

  /** The socket could not take `message` (it is closing): an ack, a track or a render report is owed until the next welcome. */
  unsent(message) {
    if (message.type === "ack") this._pendingAcks.add(message.sync);
    else if (message.type === "track") this._queueTrack(message);
    else if (message.type === "rendered" || message.type === "render_error") this._owe(message);
  }

  // MARK: - Results of actions

  /** The stored screen a `load` asked for was read: `text`, or null when there is none. */
  loaded(load, text) {
    const { entry } = load;
    if (entry.load !== load || this.screens.get(entry.screen) !== entry) return [];
    if (!text) return this._finishLoad(entry);
    let saved = null;
    try {
      saved = JSON.parse(text);
    } catch {}
    // Unreadable, or saved in another hub state (or in none known): neither shown nor sent as `have`.
    if (saved === null || typeof saved !== "object" || saved.tree === undefined || !this.isCurrent(saved)) {
      return this._dropStored(entry);
    }
    return [{ type: "verify", tree: saved.tree, verification: { source: "cache", entry, load, saved } }];
  }

  /** The tree of a `verify` hashes to `hash` (its RFC 8785 form is `canonical`). */
  verified(verification, hash, canonical) {
    const { entry, source } = verification;
    if (this.screens.get(entry.screen) !== entry) return []; // unsubscribed meanwhile
    if (source === "cache") return this._cacheVerified(verification, hash);
    if (entry.verifying !== verification) return [];
    entry.verifying = null;
    const { message, tree } = verification;
    const mismatch = { screen: entry.screen, version: message.version, expected: message.hash, actual: hash, source };
    if (source === "snapshot") {
      // The hub is the authority for the tree; a differing hash means the two canonical forms
      // disagree, and resubscribing would loop. Keep the hub's hash so `have` still resumes.
      const actions = hash === message.hash ? [] : [emit("mismatch", mismatch)];
      entry.resyncing = entry.pending = false;
      return [...actions, ...this._accept(entry, tree, message.version, message.hash, "snapshot", canonical, variantsOf(entry, message))];
    }
    if (hash !== message.hash) return [emit("mismatch", mismatch), ...this._resubscribe(entry, "hash_mismatch", message)];
    return this._accept(entry, tree, message.version, message.hash, "patch", canonical, variantsOf(entry, message));
  }

  /**
   * The tree of a `verify` could not be hashed (the shell reports why): a stored tree is dropped
   * (the screen is then subscribed without it); a hub message is void.
   */
  verifyFailed(verification) {
    const { entry, source } = verification;
    if (this.screens.get(entry.screen) !== entry) return [];
    if (source === "cache") return entry.load === verification.load ? this._dropStored(entry) : [];
    if (entry.verifying === verification) entry.verifying = null;
    return [];
  }

  /** The app's sync handlers returned for a scheduled sync: ack it and advance last_sync. */
  syncHandled(waiting) {
    if (!this._syncs.handled(waiting)) return []; // of another user or hub state: this hub does not know its id
    const actions = [...this._saveLastSync(), ...this._store(handledSyncsKey(this.scope), JSON.stringify(this._syncs.handledIds))];
    if (this.live) actions.push(send({ type: "ack", sync: waiting.id }));
    else this._pendingAcks.add(waiting.id);
    return actions;
  }

  // MARK: - Hub messages

  /** One message from the hub (parsed JSON). */
  receive(message) {
    switch (message.type) {
      case "welcome":
        return this._welcome(message);
      case "heartbeat":
        return []; // it only proves the link is alive
      case "snapshot":
      case "patch":
      case "unchanged":
        return this._screenMessage(message);
      case "gone": {
        const entry = this.screens.get(message.screen);
        this._answered(message.screen);
        if (!entry) return [];
        this.screens.delete(message.screen);
        return [...this._storeScreen(message.screen, null), emit("gone", { screen: message.screen })];
      }
      case "pending":
        return this._pending(message);
      case "sync":
        return this._sync(message);
      case "error":
        return this._error(message);
      default:
        return []; // a newer hub's message: ignored (forward compatibility)
    }
  }

  _welcome(message) {
    const epoch = typeof message.epoch === "string" ? message.epoch : undefined;
    this.welcome = {
      session: message.session, user: message.user, heartbeat_s: message.heartbeat_s, sync_seq: message.sync_seq, epoch,
    };
    this.live = true;
    this.stats.welcomes++;
    const actions = [];
    const epochChanged = epoch !== this.epoch;
    if (epochChanged && this.epoch !== undefined) {
      // Another hub state (a reset data dir, another cluster): versions and sync seqs counted in
      // the old one mean nothing here. Nothing stored is sent as `have` or shown again.
      this.stats.epochChanges++;
      if (this._syncs.handledIds.length) actions.push(...this._store(handledSyncsKey(this.scope), null));
      for (const entry of this.screens.values()) {
        forget(entry);
        actions.push(...this._storeScreen(entry.screen, null));
      }
      this._forgetOwed();
      this._syncs.reset(undefined);
    }
    this.epoch = epoch;
    this._syncs.welcomed(message.sync_seq);
    actions.push(...this._saveLastSync(epochChanged));
    // A hub that names no epoch predates heartbeats (both came in protocol v1's issue 24).
    actions.push({ type: "goLive", welcome: this.welcome, heartbeatS: message.heartbeat_s, hubSendsHeartbeats: epoch !== undefined });
    for (const entry of this.screens.values()) {
      if (entry.load === null) actions.push(this._subscribeMessage(entry)); // else once loaded
    }
    for (const report of this._owedReports.values()) actions.push(send(report));
    this._owedReports.clear();
    for (const id of this._pendingAcks) actions.push(send({ type: "ack", sync: id }));
    this._pendingAcks.clear();
    if (this.pushToken) actions.push(send(this.pushToken));
    else if (this._owesPushTokenRemoval) actions.push(send(PUSH_TOKEN_REMOVAL));
    this._owesPushTokenRemoval = false;
    for (const track of this._pendingTracks) actions.push(send(track));
    this._pendingTracks = [];
    return actions;
  }

  /** The hub has no version of the screen yet: the subscription stays, its first publish brings a snapshot. */
  _pending(message) {
    const entry = this.screens.get(message.screen);
    this._answered(message.screen);
    if (!entry) return [];
    this.stats.pending++;
    const actions = [];
    if (entry.tree !== undefined || entry.savedVersion !== undefined) {
      // What this client held is of a screen the hub no longer has (deleted while it was away).
      forget(entry);
      actions.push(...this._storeScreen(entry.screen, null));
    }
    entry.pending = true;
    entry.resyncing = true; // only the snapshot can follow
    actions.push(emit("pending", { screen: entry.screen }));
    return actions;
  }

  _screenMessage(message) {
    const entry = this.screens.get(message.screen);
    this._answered(message.screen);
    if (!entry) return []; // unsubscribed meanwhile
    if (message.type === "snapshot") {
      this.stats.snapshots++;
      if (message.tree === undefined) return []; // not a snapshot: the hub always sends a tree
      return this._verify(entry, message, message.tree, "snapshot");
    }
    if (message.type === "unchanged") {
      this.stats.unchanged++;
      if (entry.tree === undefined) return this._resubscribe(entry, "no_tree", message);
      entry.resyncing = false;
      return this._accept(entry, entry.tree, message.version, message.hash, "unchanged", null, variantsOf(entry, message));
    }
    this.stats.patches++;
    if (entry.resyncing) return []; // a patch sent before our resubscribe: the snapshot follows
    if (entry.tree === undefined || entry.version !== message.from) return this._resubscribe(entry, "unexpected_from", message);
    let tree;
    try {
      tree = applyPatch(entry.tree, message.ops);
    } catch (error) {
      return this._resubscribe(entry, "patch_failed", message, error.message);
    }
    return this._verify(entry, message, tree, "patch");
  }

  _verify(entry, message, tree, source) {
    const verification = { source, entry, message, tree };
    entry.verifying = verification;
    return [{ type: "verify", tree, verification }];
  }

  _cacheVerified({ entry, load, saved }, hash) {
    if (entry.load !== load) return [];
    if (hash !== saved.hash) return this._dropStored(entry);
    const actions = [];
    if (entry.tree === undefined && this.isCurrent(saved)) {
      entry.tree = saved.tree;
      entry.version = entry.savedVersion = saved.version;
      entry.hash = saved.hash;
      entry.variants = entry.savedVariants = variantMap(saved.variants);
      const meta = { version: saved.version, hash: saved.hash, source: "cache", variants: entry.variants };
      actions.push({ type: "deliver", entry, screen: entry.screen, tree: entry.tree, meta });
    }
    return [...actions, ...this._finishLoad(entry)];
  }

  _resubscribe(entry, reason, message, detail) {
    this.stats.resubscribes++;
    const event = { screen: entry.screen, reason, held: entry.version, from: message.from, version: message.version };
    if (detail) event.detail = detail;
    entry.version = entry.hash = undefined; // keep `tree` for the app until the snapshot replaces it
    const actions = [emit("resubscribe", event)];
    if (this.live && entry.load === null) actions.push(this._subscribeMessage(entry));
    return actions;
  }

  /**
   * Holds `tree` as `version` shaped by `variants`, stores it when that version (or those
   * variants) is not stored yet (from `canonical` when the caller has it), and delivers it when
   * it (or its variants) is new to the app.
   */
  _accept(entry, tree, version, hash, source, canonical, variants) {
    const actions = [];
    const changed = entry.delivered !== version || entry.tree !== tree || entry.variants !== variants;
    entry.tree = tree;
    entry.version = version;
    entry.hash = hash;
    entry.variants = variants;
    if (canonical !== null || entry.savedVersion !== version || entry.savedVariants !== variants) {
      entry.savedVersion = version;
      entry.savedVariants = variants;
      const stored = storedScreen(this.epoch, hash, canonical ?? this._canonical(tree), version, variants);
      actions.push(...this._storeScreen(entry.screen, stored));
    }
    if (!changed) return actions;
    entry.delivered = version;
    actions.push({ type: "deliver", entry, screen: entry.screen, tree, meta: { version, hash, source, variants } });
    return actions;
  }

  /** Sends a render report (`rendered`, `render_error`) while live; else owes it. */
  _sendReport(message) {
    if (this.live) return [send(message)];
    this._owe(message);
    return [];
  }

  /** Owes a render report until the next welcome, in place of the one owed for its screen (it goes last). */
  _owe(report) {
    this._owedReports.delete(report.screen);
    this._owedReports.set(report.screen, report);
  }

  /** The hash of the tree held for `screen` when it is `version`; undefined otherwise. */
  _heldHash(screen, version) {
    const entry = this.screens.get(screen);
    return entry && entry.version === version ? entry.hash : undefined;
  }

  /** Queues a track until the next welcome; beyond TRACK_QUEUE_LIMIT the oldest is dropped. */
  _queueTrack(message) {
    this._pendingTracks.push(message);
    while (this._pendingTracks.length > TRACK_QUEUE_LIMIT) {
      this._pendingTracks.shift();
      this.stats.tracksDropped++;
    }
  }

  _sync(message) {
    this.stats.syncs++;
    const waiting = this._syncs.received(message.id, message.seq);
    if (!waiting) {
      this.stats.duplicateSyncs++;
      return this._saveLastSync(); // one seen in a push: last_sync may pass it now
    }
    // A replay below last_sync (a first welcome, an epoch change) lowers it until handled.
    return [...this._saveLastSync(), { type: "schedule", sync: syncOf(message, message.jitter_ms), waiting }];
  }

  _error(message) {
    const event = { code: message.code, message: message.message, ref: message.ref ?? null };
    const actions = [];
    if (message.ref === "subscribe" && this._pendingSubscribes.length) {
      // A refused subscribe (unknown_screen, invalid_screen_name) did not subscribe: the entry
      // and its stored tree go, so calling subscribe() again (e.g. once the screen is published)
      // asks again.
      event.screen = this._pendingSubscribes.shift();
      if (this.screens.delete(event.screen)) actions.push(...this._storeScreen(event.screen, null));
    }
    if (message.code === "unsupported_protocol" || message.code === "unauthorized") {
      actions.push({ type: "stopReconnecting", error: event });
    }
    actions.push(emit("error", event));
    return actions;
  }

  // MARK: - Helpers

  /** Asks the shell for `entry`'s stored tree (once a scope is known: `enter` asks then). */
  _startLoad(entry) {
    entry.load = { entry };
    if (this.scope === undefined) return [];
    return [{ type: "load", key: screenKey(this.scope, entry.screen), load: entry.load }];
  }

  /** `entry`'s stored tree is unusable (unreadable, of another epoch, or hashing wrong): it goes, and the screen is subscribed without it. */
  _dropStored(entry) {
    return [...this._storeScreen(entry.screen, null), ...this._finishLoad(entry)];
  }

  /** `entry`'s stored tree was read (or found unusable): it can be subscribed now. */
  _finishLoad(entry) {
    entry.load = null;
    return this.live ? [this._subscribeMessage(entry)] : [];
  }

  _subscribeMessage(entry) {
    const message = { type: "subscribe", screen: entry.screen };
    if (entry.version !== undefined && entry.hash !== undefined) message.have = { version: entry.version, hash: entry.hash };
    else entry.resyncing = true; // until a snapshot arrives, patches cannot apply
    this._pendingSubscribes.push(entry.screen);
    return send(message);
  }

  /** The first answer to a subscribe of `screen` arrived. */
  _answered(screen) {
    const index = this._pendingSubscribes.indexOf(screen);
    if (index >= 0) this._pendingSubscribes.splice(index, 1);
  }

  /** Writes the stored tree of `screen` (removes it when `value` is null). */
  _storeScreen(screen, value) {
    return this.scope === undefined ? [] : this._store(screenKey(this.scope, screen), value);
  }

  /** Writes `key` (removes it when `value` is null), while a scope is known: its actions. */
  _store(key, value) {
    return this.scope === undefined ? [] : [{ type: "store", key, value }];
  }

  /**
   * last_sync = every sync up to it was handed to the app: a reload during a jitter wait gets it
   * again. Kept with the epoch it counts in (`force`: write the record although the value is the same).
   */
  _saveLastSync(force = false) {
    if (!this._syncs.settle() && !force) return [];
    if (this.epoch === undefined) return []; // a hub without epochs: nothing to resume from later
    return this._store(recordKey(this.scope), scopeRecord(this.epoch, this.lastSync));
  }

  /** What is owed to one user in one hub state: acks, and render reports (a version drawn for another user or state means nothing here). */
  _forgetOwed() {
    this._pendingAcks.clear();
    this._owedReports.clear();
  }
}

/** Forgets what a screen entry held (another user's or another hub state's tree): nothing of it is shown or sent as `have` again. */
function forget(entry) {
  entry.tree = entry.version = entry.hash = entry.delivered = entry.savedVersion = entry.savedVariants = undefined;
  entry.variants = NO_VARIANTS;
  entry.resyncing = entry.pending = false;
  entry.verifying = null;
}

/**
 * The variants a screen message leaves `entry` with (docs/protocol.md): a patch without
 * `variants` keeps the entry's; otherwise the message's map (absent: `{}`). The entry's object is
 * kept when the map is the same, so a new object always means a change.
 */
function variantsOf(entry, message) {
  if (message.variants === undefined && message.type === "patch") return entry.variants;
  const next = variantMap(message.variants);
  return sameVariants(entry.variants, next) ? entry.variants : next;
}

function sameVariants(a, b) {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => b[key] === a[key]);
}

/** A sync object (from the socket or a push) as the app's handlers get it. */
function syncOf(message, jitterMs) {
  return {
    id: message.id, seq: message.seq, reason: message.reason, scope: message.scope, hint: message.hint,
    mandatory: message.mandatory === true, jitterMs,
  };
}

/** The message removing this device's push token (sign-out). */
const PUSH_TOKEN_REMOVAL = Object.freeze({ type: "push_token", token: null });

/** The `push_token` message of `token` (null for none); a TypeError when it is not a token. */
export function pushTokenMessage(token) {
  if (token === null || token === undefined) return null;
  const { provider, token: value, topic } = token;
  if ((provider !== "apns" && provider !== "fcm") || typeof value !== "string" || value === "" ||
      (topic !== undefined && typeof topic !== "string") || (provider === "apns" && !topic)) {
    throw new TypeError(
      `setPushToken: needs { provider: "apns", token, topic } or { provider: "fcm", token } (got ${JSON.stringify(token)})`);
  }
  const message = { type: "push_token", provider, token: value };
  if (topic !== undefined) message.topic = topic;
  return message;
}

/** A value as an error message quotes it. */
function describe(value) {
  if (typeof value === "string") return JSON.stringify(value.length > 80 ? value.slice(0, 80) + "…" : value);
  if (typeof value === "number") return String(value);
  return value === null ? "null" : typeof value;
}

function send(message) {
  return { type: "send", message };
}

function emit(event, detail) {
  return { type: "emit", event, detail };
}
