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
  /** Where `have` (tree, version, hash per screen), `last_sync` and the device id live. Default: localStorage in browsers, else memory. */
  storage?: Storage;
  /** Prefix of the storage keys (default "pushhub"); use one per hub and user. */
  storageKey?: string;
  /** The fetch function `fetchScreen` uses (default globalThis.fetch). */
  fetch?: typeof fetch;
}

export interface PushHubOptions extends ClientIdentityOptions {
  /** Reconnect delay: a random 0..min(maxMs, initialMs × 2^attempt) (full jitter). Defaults: 500 ms, 30 s. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Send `rendered` automatically once every onTree callback for a version returned (or its promise resolved). Default true. */
  autoRendered?: boolean;
  /** "built-in" forces the JavaScript SHA-256 even where SubtleCrypto exists (tests). */
  hash?: "auto" | "built-in";
  /** The WebSocket constructor (default: globalThis.WebSocket). */
  WebSocket?: new (url: string, protocols?: string | string[]) => WebSocket;
  /** Random numbers in [0, 1) for the backoff and sync jitter (default Math.random; tests inject one). */
  random?: () => number;
}

export interface TreeMeta {
  version: number;
  hash: string;
  /** "cache": from storage, not yet confirmed by the hub; "unchanged": the hub confirmed the cached tree. */
  source: "cache" | "snapshot" | "patch" | "unchanged";
}

export interface Subscription {
  readonly screen: string;
  readonly tree: JSONValue | undefined;
  /** Undefined while the client waits for a snapshot (after a resubscribe). */
  readonly version: number | undefined;
  readonly hash: string | undefined;
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

export interface PushHubEvents {
  state: { state: ConnectionState };
  welcome: { session: string; user: string | null; heartbeat_s: number; sync_seq: number };
  /** The socket closed. `reconnect` false: after `close()` or an error reconnecting cannot fix (`error`). */
  close: { code: number; reason: string; reconnect: boolean; delayMs?: number; attempt?: number; error?: PushHubEvents["error"] };
  /** An `error` message from the hub (docs/protocol.md "Errors"), or a client-side "storage", "token", "connect" problem. `screen` is set for subscribe errors: that subscription ended (subscribe again to retry). */
  error: { code: string; message: string; ref: string | null; screen?: string };
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
  };
  subscribe(screen: string, onTree?: (tree: JSONValue, meta: TreeMeta) => void | Promise<void>): Subscription;
  onSync(handler: (sync: Sync) => void | Promise<void>): () => void;
  on<K extends keyof PushHubEvents>(type: K, listener: (event: PushHubEvents[K]) => void): () => void;
  rendered(screen: string, version: number): void;
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
  /** 200: a new tree (checked against its hash, now in storage); 304: the stored tree is current. */
  status: 200 | 304;
}

/** A failed fetch: 401 "unauthorized", 404 "unknown_screen", "mismatch" (the tree does not hash to its hash), "network" (status 0), else "http". */
export declare class FetchError extends Error {
  code: "unauthorized" | "unknown_screen" | "mismatch" | "network" | "http";
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
