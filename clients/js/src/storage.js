// What the client keeps (docs/clients.md "Storage"): a device id, and per user (scope) the hub
// state (epoch) its keys belong to with last_sync, and each screen's tree, version and hash.
//
//   <storageKey>:device                       the generated device id (anonymous clients)
//   <storageKey>:push_token                   {"type":"push_token","provider","token","topic"?} (the device's)
//   <storageKey>:<scope>:epoch                {"epoch","last_sync"}
//   <storageKey>:<scope>:syncs                ["s-1239","s-1240"]: the last 64 syncs handed to the app
//   <storageKey>:<scope>:screen:<name>        {"epoch","hash","tree","variants"?,"version"}
//
// <scope> is `user:<sub>` or `device:<id>` (URI-encoded). Keys below are relative to
// `<storageKey>:`; the client adds that prefix when it reads and writes.

import { canonicalize } from "./canonical-json.js";

/** A localStorage-like store kept in memory (the default outside browsers). */
export class MemoryStorage {
  constructor() {
    this.items = new Map();
  }
  getItem(key) {
    return this.items.has(key) ? this.items.get(key) : null;
  }
  setItem(key, value) {
    this.items.set(key, String(value));
  }
  removeItem(key) {
    this.items.delete(key);
  }
}

/** localStorage where the platform has one and allows it, else a MemoryStorage. */
export function defaultStorage() {
  try {
    const storage = globalThis.localStorage; // throws where storage is blocked (sandboxed frames, some private modes)
    if (storage) return storage;
  } catch {}
  return new MemoryStorage();
}

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** The `sub` of a JWT, read from its payload without verifying it (the hub verifies); null when unreadable. */
export function tokenSubject(token) {
  const part = typeof token === "string" ? token.split(".")[1] : undefined;
  if (!part) return null;
  const bytes = [];
  let bits = 0, value = 0;
  for (const c of part.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")) {
    const digit = BASE64URL.indexOf(c);
    if (digit < 0) return null;
    value = (value << 6) | digit;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((value >> bits) & 0xff);
    }
  }
  try {
    const text = typeof TextDecoder === "function"
      ? new TextDecoder().decode(new Uint8Array(bytes))
      : decodeURIComponent(bytes.map((b) => "%" + (b < 16 ? "0" : "") + b.toString(16)).join(""));
    const sub = JSON.parse(text).sub;
    return typeof sub === "string" && sub !== "" ? sub : null;
  } catch {
    return null;
  }
}

/**
 * The storage scope of a client: `user:<sub>` when signed in (the token's `sub`), else
 * `device:<id>`. Every key but the device id is inside one (docs/clients.md "Storage"), so one
 * user's trees and last_sync are never another's.
 */
export function storageScope(token, device) {
  if (token) return "user:" + encodeURIComponent(tokenSubject(token) ?? "");
  return "device:" + encodeURIComponent(device ?? "");
}


/** The key of `screen`'s stored tree in `scope`. */
export function screenKey(scope, screen) {
  return scope + ":screen:" + screen;
}

/** The key of `scope`'s record: the hub state (epoch) its keys belong to, and its last_sync. */
export function recordKey(scope) {
  return scope + ":epoch";
}

/** The key of `scope`'s handled sync ids (a JSON array, oldest first). */
export function handledSyncsKey(scope) {
  return scope + ":syncs";
}

/** Where the device's push token is kept (outside every scope: it belongs to the device). */
export const PUSH_TOKEN_KEY = "push_token";

/** Where the device id is kept (outside every scope: it names one). */
export const DEVICE_KEY = "device";

/** last_sync as clients before storage scopes kept it, whose user is unknown: never read, removed. */
export const LEGACY_LAST_SYNC_KEY = "last_sync";

/** A scope's record, `<scope>:epoch` → `{"epoch","last_sync"}`: the hub state its keys belong to. */
export async function readScopeRecord(storage, key) {
  try {
    const record = JSON.parse((await storage.getItem(key)) || "null");
    if (record && typeof record.epoch === "string") {
      return { epoch: record.epoch, lastSync: Number.isSafeInteger(record.last_sync) ? record.last_sync : undefined };
    }
  } catch {} // unreadable is as good as absent: a fresh start
  return { epoch: undefined, lastSync: undefined };
}

/** A scope's handled sync ids, `<scope>:syncs` → `["s-1",…]`; [] when absent or unreadable. */
export async function readHandledSyncs(storage, key) {
  try {
    const ids = JSON.parse((await storage.getItem(key)) || "[]");
    if (Array.isArray(ids)) return ids.filter((id) => typeof id === "string");
  } catch {}
  return [];
}

/** A scope's record as stored: `{"epoch"}`, with `"last_sync"` once there is one. */
export function scopeRecord(epoch, lastSync) {
  const record = { epoch };
  if (lastSync !== undefined) record.last_sync = lastSync;
  return JSON.stringify(record);
}

/** The variants of a screen no experiment shaped. */
export const NO_VARIANTS = Object.freeze({});

/**
 * The `{experiment: variant}` map a hub message or a stored screen carries, frozen: its string
 * members (`NO_VARIANTS` for anything else, or for none).
 */
export function variantMap(value) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return NO_VARIANTS;
  const entries = Object.entries(value).filter(([, variant]) => typeof variant === "string");
  return entries.length === 0 ? NO_VARIANTS : Object.freeze(Object.fromEntries(entries));
}

/**
 * A screen as stored: `{"epoch","hash","tree","variants","version"}` in canonical member order
 * around the tree's canonical form; `variants` (the experiments that shaped the tree) only when
 * there are some.
 */
export function storedScreen(epoch, hash, canonicalTree, version, variants) {
  const shaped = variants && Object.keys(variants).length > 0 ? `"variants":${canonicalize(variants)},` : "";
  return (epoch === undefined ? "{" : `{"epoch":${JSON.stringify(epoch)},`) +
    `"hash":${JSON.stringify(hash)},"tree":${canonicalTree},${shaped}"version":${version}}`;
}

/** The device id kept in `storage` (generated once): the unit anonymous clients are bucketed by. */
export async function storedDevice(storage, prefix) {
  let device = null;
  try {
    device = await storage.getItem(prefix + DEVICE_KEY);
  } catch {}
  if (!device) {
    device = randomID();
    try {
      await storage.setItem(prefix + DEVICE_KEY, device);
    } catch {}
  }
  return device;
}

/** A new device id: "d-" and a random UUID where the platform makes one. */
function randomID() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === "function") return "d-" + c.randomUUID();
  return "d-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
}
