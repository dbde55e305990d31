// Types for pushhub-client.js (PushHub protocol v1, DESIGN §12; usage in docs/clients.md).

/** Any JSON value (a screen tree is normally an object of components). */
export type JSONValue = null | boolean | number | string | JSONValue[] | { [key: string]: JSONValue };

/** One RFC 6902 operation. */
export type PatchOperation =
  | { op: "add" | "replace" | "test"; path: string; value: JSONValue }
  | { op: "remove"; path: string }
  | { op: "move" | "copy"; from: string; path: string };

/** A localStorage-like store; React Native's AsyncStorage fits (promises are awaited). */
export interface Storage {
  getItem(key: string): string | null | Promise<string | null>;
  setItem(key: string, value: string): void | Promise<void>;
  removeItem(key: string): void | Promise<void>;
}

export type ConnectionState = "connecting" | "live" | "reconnecting" | "closed";

/** Who the client is and where it keeps its state: the same for a live `PushHub` and `fetchScreen`. */
export interface ClientIdentityOptions {
  /** The hub's WebSocket endpoint, e.g. "wss://push.example.com/v1/connect" (a fetch goes to https://host/v1/screens/{name}). */
  url: string;
  /** A client JWT, or a function returning one (called before every connection or fetch: refresh it there). */
  token?: string | (() => string | Promise<string>);
  /** The unit id of an anonymous client; generated and kept in `storage` when neither token nor device is given. */
  device?: string;
  /** The platform and semantic app version: sent in hello (or as ?platform= and ?app_version=), for targeting and the capability filter. */
  app?: { platform?: string; version?: string };
  /**
   * The components this build renders, each with the highest version of it that it renders
   * (DESIGN §16): `{ Carousel: 2, Text: 1 }`, sent as hello.components (and as ?components= by a
   * fetch). The hub never sends this client a node of a registered component it lacks, or a newer
   * version than it renders: it gets the node's `fallback`, or nothing. `{}` renders no
   * registered component. Without it the hub uses the profile registered for `app` (`hubctl app
   * components set`), else sends everything. Names are 1–100 of A–Z a–z 0–9 . _ - (case matters:
   * the node's "type"), versions integers 1…1000, at most 1000 names: anything else makes
   * `new PushHub` throw a TypeError (and `fetchScreen` reject with one).
   */
  components?: { [component: string]: number };
  /**
   * Where `have` (tree, version, hash per screen), `last_sync` and the device id live. Default:
   * localStorage in browsers, else memory. Kept per user (the token's `sub`, or the device) and
   * per hub state (`welcome.epoch`): one storage may serve several users and hubs.
   */
  storage?: Storage;
  /** Prefix of the storage keys (default "pushhub"): `<storageKey>:user:<sub>:screen:<name>`, `…:epoch`, `<storageKey>:device`. */
  storageKey?: string;
  /** The fetch function `fetchScreen` uses (default globalThis.fetch). */
  fetch?: typeof fetch;
}

/**
 * The reconnect schedule: attempt n (since the last welcome) waits a random
 * 0..min(maxMs, initialMs × 2^n) (full jitter). A close 1001 (the hub restarts) starts it over at
 * attempt 0, and for goingAwayWindowMs after it the ceiling stops at goingAwayMaxMs: the client is
 * back within about goingAwayMaxMs of the hub's return.
 */
export interface Backoff {
  /** Default 500. */
  initialMs: number;
  /** Default 30000. */
  maxMs: number;
  /** Default 4000. */
  goingAwayMaxMs: number;
  /** Default 60000. */
  goingAwayWindowMs: number;
}

export interface PushHubOptions extends ClientIdentityOptions {
  /** The reconnect schedule (see Backoff); each field optional. */
  backoff?: Partial<Backoff>;
  /**
   * Send `rendered` automatically once every onTree callback for a version returned (or its promise resolved). Default true.
   * (A callback that throws or rejects reports a `render_error` instead, whatever this says: see PushHub.subscribe.)
   */
  autoRendered?: boolean;
  /** "built-in" forces the JavaScript SHA-256 even where SubtleCrypto exists (tests). */
  hash?: "auto" | "built-in";
  /** The WebSocket constructor (default: globalThis.WebSocket). */
  WebSocket?: new (url: string, protocols?: string | string[]) => WebSocket;
  /** Random numbers in [0, 1) for the backoff and sync jitter (default Math.random; tests inject one). */
  random?: () => number;
  /** Milliseconds from a clock that does not jump (default performance.now): the dead-link and restart timing. */
  now?: () => number;
}

export interface TreeMeta {
  version: number;
  hash: string;
  /** "cache": from storage, not yet confirmed by the hub; "unchanged": the hub confirmed the cached tree. */
  source: "cache" | "snapshot" | "patch" | "unchanged";
  /**
   * The running experiments that shaped this tree for this client, experiment key → variant key
   * (a control variant without a patch counts); `{}` when none. For the app's own analytics.
   * Frozen; a change of variants alone (same tree) calls onTree again with the new map. With
   * source "cache", the map stored with the tree (`{}` for a tree stored by fetchScreen).
   */
  variants: Readonly<Record<string, string>>;
}

export interface Subscription {
  readonly screen: string;
  readonly tree: JSONValue | undefined;
  /** Undefined while the client waits for a snapshot (after a resubscribe). */
  readonly version: number | undefined;
  readonly hash: string | undefined;
  /** The variants of the tree held (see TreeMeta.variants); `{}` when none or no tree yet. */
  readonly variants: Readonly<Record<string, string>>;
  /** True while the hub says the screen has no version yet (not published, or deleted): the first publish brings its tree. */
  readonly pending: boolean;
  /** Removes this callback; the last one unsubscribes (the cached tree stays in storage). */
  close(): void;
}

export interface Sync {
  id: string;
  seq: number;
  reason: string;
  scope: string;
  hint?: JSONValue;
  mandatory: boolean;
  jitterMs: number;
  /** How long the client waited before calling the handlers (random 0..jitterMs). */
  delayMs: number;
  /** Date.now() when the sync arrived. */
  receivedAt: number;
}

/**
 * A device's push token for the hub's silent-push fallback (DESIGN §17): APNs (the device token
 * as hex, the app's bundle id as `topic`) or FCM (the registration token).
 */
export type PushToken = { provider: "apns"; token: string; topic: string } | { provider: "fcm"; token: string };

export interface PushHubEvents {
  state: { state: ConnectionState };
  /** `epoch`: the hub state's identity (versions and sync seqs count within it); undefined from hubs before epochs. */
  welcome: { session: string; user: string | null; heartbeat_s: number; sync_seq: number; epoch?: string };
  /**
   * The socket closed. `reconnect` false: after `close()` or an error reconnecting cannot fix
   * (`error`). Code 1006 with a reason ending "the link is dead": nothing arrived for
   * 2 × heartbeat_s + 2 s, so the client gave the socket up itself.
   */
  close: { code: number; reason: string; reconnect: boolean; delayMs?: number; attempt?: number; error?: PushHubEvents["error"] };
  /** An `error` message from the hub (docs/protocol.md "Errors"), or a client-side "storage", "token", "connect" problem. `screen` is set for subscribe errors: that subscription ended (subscribe again to retry). */
  error: { code: string; message: string; ref: string | null; screen?: string };
  /** The hub has no version of the screen yet (not published, or deleted): the subscription stays, the first publish brings its snapshot. */
  pending: { screen: string };
  /** The client dropped its copy of a screen and asked for a snapshot. */
  resubscribe: { screen: string; reason: "hash_mismatch" | "unexpected_from" | "patch_failed" | "no_tree"; held?: number; from?: number; version: number; detail?: string };
  /** A tree whose hash differs from the hub's (after a patch: followed by a resubscribe). */
  mismatch: { screen: string; version: number; expected: string; actual: string; source: "snapshot" | "patch" };
  /** The screen was deleted; the subscription ended. */
  gone: { screen: string };
}

export declare const PROTOCOL: 1;
export declare const CloseCodes: Readonly<{ normal: 1000; goingAway: 1001; abnormal: 1006; policyViolation: 1008; messageTooBig: 1009 }>;

export declare class PushHub {
  constructor(options: PushHubOptions);
  readonly url: string;
  readonly state: ConnectionState;
  /** The last sync seq fully handled (sent as hello.last_sync on the next connection). */
  readonly lastSync: number | undefined;
  /** The current session's welcome, null while not live. */
  readonly session: PushHubEvents["welcome"] | null;
  readonly stats: {
    connects: number; welcomes: number; snapshots: number; patches: number; unchanged: number;
    resubscribes: number; syncs: number; duplicateSyncs: number;
    /** `pending` answers; sockets given up as dead (no message for 2 × heartbeat_s + 2 s); welcomes naming another hub state than storage held. */
    pending: number; deadLinks: number; epochChanges: number;
    /** `track` calls accepted; those dropped unsent (beyond 100 waiting for a connection, or after the client closed for good). */
    tracks: number; tracksDropped: number;
    /** Syncs handed to the app from a silent push (`handlePush`), not seen on the socket before. */
    pushedSyncs: number;
  };
  /**
   * Follows `screen`; `onTree` gets each new tree. If `onTree` throws (or its promise rejects) for
   * a tree the hub sent (meta.source not "cache"), the client sends a `render_error` for that
   * version (as `renderFailed` does, with the thrown value) and no `rendered`; the other
   * callbacks still run, and the error still surfaces in the console.
   */
  subscribe(screen: string, onTree?: (tree: JSONValue, meta: TreeMeta) => void | Promise<void>): Subscription;
  onSync(handler: (sync: Sync) => void | Promise<void>): () => void;
  on<K extends keyof PushHubEvents>(type: K, listener: (event: PushHubEvents[K]) => void): () => void;
  /** Tells the hub the app drew `version` of `screen` (sent automatically with autoRendered). While not live, sent after the next welcome (the latest report per screen). */
  rendered(screen: string, version: number): void;
  /**
   * Tells the hub the app could not draw `version` of `screen` (DESIGN §15: counted against a
   * release's guard), for errors the app catches itself:
   * `{"type":"render_error","screen","version","hash"?,"component"?,"message"}` with `hash` the
   * tree's when this client holds that version, `component` the error's `component` property
   * when it is a string (cut to 200 characters), and `message` `String(error.message ?? error)`
   * cut to 1000 characters (Unicode code points). While not live, sent after the next welcome:
   * one report per screen waits, the latest (`rendered` or `render_error`); a user switch or
   * another hub state drops it. Throws a TypeError unless `screen` is a string and `version` an
   * integer (nothing is sent).
   */
  renderFailed(screen: string, version: number, error: unknown): void;
  /**
   * Reports a goal event for experiment results (DESIGN §6), e.g. `track("purchase", 12.5)`.
   * `event`: 1–64 characters of A–Z a–z 0–9 _ . : -; `value`: a finite number, or omitted. Throws
   * a TypeError otherwise (nothing is sent). While not live, up to 100 wait and are sent after
   * the next welcome (the oldest dropped beyond; stats.tracksDropped); a user switch (a token
   * naming another `sub`) drops those of the previous user; after close() (or an error that
   * stops reconnecting) they are dropped and counted. The hub counts an event only for
   * units already served a variant, and answers a bad one with an `error` event (code "bad_track").
   */
  track(event: string, value?: number): void;
  /**
   * Registers the device's push token (DESIGN §17), or removes it with null (sign-out): sent at
   * once when live and after every welcome, kept in storage so that a restart sends it again (the
   * same token again changes nothing). A client with a token but no `device` gets one generated
   * and kept, and reconnects at once if it was connected without one. Throws a TypeError for
   * anything but a PushToken or null; the promise settles once the token is handled.
   */
  setPushToken(token: PushToken | null): Promise<void>;
  /**
   * Hands the sync a silent push carries to the `onSync` handlers, without the jitter wait:
   * APNs userInfo (`{ aps, pushhub: {…} }`), an FCM data map (`{ pushhub: "<JSON text>" }`) or a
   * React Native module's message with either in `data`. Each sync id reaches the app once,
   * whichever way came first (the last 64 handled are kept in storage); a push does not move
   * `lastSync`. Resolves to false at once for a push that is not PushHub's, else to true once the
   * handlers settled (at once for a sync handed over already).
   */
  handlePush(payload: unknown): Promise<boolean>;
  /** `fetchScreen(screen)` as this client (its token, device, app, storage); `If-None-Match` is the hash it holds. Needs no live connection. */
  fetchScreen(screen: string, options?: { signal?: AbortSignal }): Promise<FetchedScreen>;
  close(): void;
}

export interface FetchScreenOptions extends ClientIdentityOptions {
  signal?: AbortSignal;
}

export interface FetchedScreen {
  screen: string;
  tree: JSONValue;
  version: number;
  hash: string;
  /** The experiments that shaped this tree for this client (as in TreeMeta.variants); with a 304, those kept with the stored tree. */
  variants: Readonly<Record<string, string>>;
  /** 200: a new tree (checked against its hash, now in storage); 304: the stored tree is current. */
  status: 200 | 304;
}

/**
 * A failed fetch. `code`: the hub's error code when the hub answered (its JSON body
 * `{"error":{"code","message"}}`: "unauthorized" 401, "unknown_screen" 404, "bad_app_version"
 * 400, …); `http_<status>` ("http_404", "http_502") for an answer that is not the hub's — a proxy
 * or load balancer in the way, e.g. a path it does not forward; "mismatch" (the tree does not
 * hash to its hash); "network" (no answer, status 0); "http" (a 200 that is not a screen).
 */
export declare class FetchError extends Error {
  code: "unauthorized" | "unknown_screen" | "mismatch" | "network" | "http" | `http_${number}` | (string & {});
  status: number;
}

/**
 * HTTP fetch of a screen without a socket (widgets, background refresh): GET /v1/screens/{name}
 * with the stored tree's hash as If-None-Match; a 304 returns the stored tree, a 200 stores the
 * new one (a PushHub created later starts from it and resumes with `have`).
 */
export declare function fetchScreen(name: string, options: FetchScreenOptions): Promise<FetchedScreen>;
/** The URL fetchScreen requests for `name` given a WebSocket URL (ws → http, wss → https). */
export declare function screenURL(url: string, name: string): URL;
/** The defaults of PushHubOptions.backoff. */
export declare const DEFAULT_BACKOFF: Readonly<Backoff>;
/** The delay of reconnect attempt `attempt` (0-based) for a uniform `random` in [0, 1); `restarting`: within goingAwayWindowMs of a 1001. */
export declare function reconnectDelay(backoff: Backoff, attempt: number, restarting: boolean, random: number): number;
/** The `sub` of a JWT's payload, unverified; null when unreadable. */
export declare function tokenSubject(token: string): string | null;
/** The storage scope of a client: "user:<sub>" with a token, else "device:<id>" (URI-encoded). */
export declare function storageScope(token: string | undefined, device: string | undefined): string;

export declare class PatchError extends Error {
  op?: PatchOperation;
}
export declare class MemoryStorage implements Storage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** RFC 6902 apply; returns a new document sharing unchanged subtrees; throws PatchError. */
export declare function applyPatch(document: JSONValue, ops: PatchOperation[]): JSONValue;
export declare function parsePointer(pointer: string): string[];
export declare function jsonEqual(a: JSONValue, b: JSONValue): boolean;
/** RFC 8785 canonical JSON; `cache` keeps the form of frozen containers (copy-on-write trees). */
export declare function canonicalize(value: JSONValue, cache?: WeakMap<object, string>): string;
/** Freezes every container down to the already frozen ones; returns `value`. */
export declare function deepFreeze<T>(value: T): T;
export declare function utf8(text: string): Uint8Array;
/** The built-in SHA-256. */
export declare function sha256(bytes: Uint8Array): Uint8Array;
export declare function sha256Hex(text: string, options?: { builtIn?: boolean }): Promise<string>;
/** DESIGN §4's screen hash: hex SHA-256 of the RFC 8785 form. */
export declare function screenHash(tree: JSONValue, options?: { builtIn?: boolean }): Promise<string>;
