// PushHub JavaScript client, protocol v1 (DESIGN §12, docs/protocol.md, docs/clients.md).
// One ES module, no dependencies: browsers and React Native.
//
// What it does for the app: hello/welcome, subscribe with `have` (resume), RFC 6902 patches
// applied copy-on-write (unchanged subtrees keep their identity), every new tree checked against
// the hub's hash (RFC 8785 canonical JSON + SHA-256), a clean resubscribe on a mismatch or a
// patch from a version it does not hold, syncs deduped by id, delivered after a random
// 0..jitter_ms wait and acked, `rendered`, `have` and `last_sync` kept in a storage, reconnect
// with exponential backoff and full jitter, typed events for close codes and hub errors. And
// `fetchScreen`: the same tree over HTTP with an ETag, for code that cannot hold a socket.
//
// Messages are handled strictly in arrival order although hashing is asynchronous: every
// incoming message (and every local action that touches subscription state) is a task on one
// promise chain.

export const PROTOCOL = 1;

const hasOwn = Object.prototype.hasOwnProperty;

// MARK: - RFC 6901 JSON Pointer and RFC 6902 JSON Patch

/** A patch that cannot be applied to the tree the client holds (RFC 6902 §5: the whole patch fails). */
export class PatchError extends Error {
  constructor(message, op) {
    super(message);
    this.name = "PatchError";
    this.op = op;
  }
}

/** Splits an RFC 6901 pointer into reference tokens ("~1" is "/", then "~0" is "~"). */
export function parsePointer(pointer) {
  if (pointer === "") return [];
  if (typeof pointer !== "string" || pointer[0] !== "/") {
    throw new PatchError(`${JSON.stringify(pointer)} is not a JSON Pointer (RFC 6901: "" or starting with "/")`);
  }
  if (/~(?![01])/.test(pointer)) throw new PatchError(`${JSON.stringify(pointer)} has a "~" not followed by 0 or 1`);
  return pointer.slice(1).split("/").map((t) => (t.indexOf("~") < 0 ? t : t.replace(/~1/g, "/").replace(/~0/g, "~")));
}

function isContainer(value) {
  return value !== null && typeof value === "object";
}

/** An array index token (RFC 6901 §4: digits without a leading zero) as a number, checked against `limit`. */
function arrayIndex(array, token, limit, op) {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchError(`"${token}" is not an array index`, op);
  const index = Number(token);
  if (index > limit) throw new PatchError(`index ${index} is out of range (array length ${array.length})`, op);
  return index;
}

/** Sets a member without invoking setters: "__proto__" is an ordinary key in JSON. */
function setMember(object, key, value) {
  if (key === "__proto__") {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    object[key] = value;
  }
}

function child(node, token, op) {
  if (Array.isArray(node)) return node[arrayIndex(node, token, node.length - 1, op)];
  if (isContainer(node) && hasOwn.call(node, token)) return node[token];
  throw new PatchError(`no member "${token}" at ${JSON.stringify(op && (op.from ?? op.path))}`, op);
}

function valueAt(root, tokens, op) {
  let node = root;
  for (const token of tokens) node = child(node, token, op);
  return node;
}

function cloneJSON(value) {
  if (!isContainer(value)) return value;
  if (Array.isArray(value)) return value.map(cloneJSON);
  const copy = {};
  for (const key of Object.keys(value)) setMember(copy, key, cloneJSON(value[key]));
  return copy;
}

/** JSON equality for the `test` op: numbers by value, objects by their member sets. */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (!isContainer(a) || !isContainer(b) || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => hasOwn.call(b, k) && jsonEqual(a[k], b[k]));
}

/**
 * Applies an RFC 6902 patch and returns the new document; `document` is not modified.
 * Copy-on-write: only the containers on the paths the ops touch are copied, every other subtree
 * is shared with `document` (so a UI can skip what kept its identity). Throws `PatchError`.
 */
export function applyPatch(document, ops) {
  if (!Array.isArray(ops)) throw new PatchError("a JSON Patch is an array of operations");
  const fresh = new Set(); // containers this call copied: safe to mutate
  let root = document;
  const own = (container) => {
    if (fresh.has(container)) return container;
    const copy = Array.isArray(container) ? container.slice() : { ...container };
    fresh.add(copy);
    return copy;
  };
  // The container that holds the last token of `tokens`, copied (with its ancestors) if needed.
  const parentFor = (tokens, op) => {
    if (!isContainer(root)) throw new PatchError(`the document is not a container`, op);
    root = own(root);
    let node = root;
    for (let i = 0; i < tokens.length - 1; i++) {
      const original = child(node, tokens[i], op);
      if (!isContainer(original)) throw new PatchError(`"${tokens[i]}" is not an object or array`, op);
      const copy = own(original);
      if (copy !== original) {
        if (Array.isArray(node)) node[Number(tokens[i])] = copy;
        else setMember(node, tokens[i], copy);
      }
      node = copy;
    }
    return node;
  };
  const add = (tokens, value, op) => {
    if (tokens.length === 0) return void (root = value);
    const parent = parentFor(tokens, op);
    const last = tokens[tokens.length - 1];
    if (Array.isArray(parent)) {
      if (last === "-") parent.push(value);
      else parent.splice(arrayIndex(parent, last, parent.length, op), 0, value);
    } else {
      setMember(parent, last, value);
    }
  };
  const remove = (tokens, op) => {
    if (tokens.length === 0) throw new PatchError("cannot remove the whole document", op);
    const parent = parentFor(tokens, op);
    const last = tokens[tokens.length - 1];
    const value = child(parent, last, op);
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
    return value;
  };
  for (const op of ops) {
    if (!isContainer(op) || typeof op.path !== "string") throw new PatchError("an operation needs a string path", op);
    const path = parsePointer(op.path);
    switch (op.op) {
      case "add":
        if (!hasOwn.call(op, "value")) throw new PatchError("add needs a value", op);
        add(path, op.value, op);
        break;
      case "remove":
        remove(path, op);
        break;
      case "replace":
        if (!hasOwn.call(op, "value")) throw new PatchError("replace needs a value", op);
        if (path.length === 0) {
          root = op.value;
        } else {
          const parent = parentFor(path, op);
          const last = path[path.length - 1];
          child(parent, last, op); // must exist
          if (Array.isArray(parent)) parent[Number(last)] = op.value;
          else setMember(parent, last, op.value);
        }
        break;
      case "move": {
        if (typeof op.from !== "string") throw new PatchError("move needs a string from", op);
        const from = parsePointer(op.from);
        if (op.path.startsWith(op.from + "/")) throw new PatchError("cannot move a value into one of its children", op);
        if (op.from === op.path) {
          valueAt(root, from, op);
          break;
        }
        add(path, remove(from, op), op);
        break;
      }
      case "copy":
        if (typeof op.from !== "string") throw new PatchError("copy needs a string from", op);
        add(path, cloneJSON(valueAt(root, parsePointer(op.from), op)), op);
        break;
      case "test":
        if (!jsonEqual(valueAt(root, path, op), op.value)) throw new PatchError(`test failed at ${op.path}`, op);
        break;
      default:
        throw new PatchError(`unknown op ${JSON.stringify(op.op)}`, op);
    }
  }
  return root;
}

// MARK: - RFC 8785 canonical JSON

/**
 * The RFC 8785 (JCS) form of a JSON value: members sorted by UTF-16 code units (what
 * `Array.prototype.sort` does with no comparator), strings and numbers as ECMAScript's
 * JSON.stringify writes them (RFC 8785 §3.2.2 is defined by it: 1e+21, 5e-324, -0 as 0, U+2028 raw).
 * `cache` (a WeakMap) keeps the form of each frozen container, for trees that change by copy-on-write.
 */
export function canonicalize(value, cache) {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`${value} has no JSON form`);
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (value === null) return "null";
      if (cache) {
        const known = cache.get(value);
        if (known !== undefined) return known;
      }
      let text;
      if (Array.isArray(value)) {
        text = "[";
        for (let i = 0; i < value.length; i++) text += (i ? "," : "") + canonicalize(value[i], cache);
        text += "]";
      } else {
        const keys = Object.keys(value).sort();
        text = "{";
        for (let i = 0; i < keys.length; i++) {
          text += (i ? "," : "") + JSON.stringify(keys[i]) + ":" + canonicalize(value[keys[i]], cache);
        }
        text += "}";
      }
      // Only a frozen container can keep its form: the client freezes the trees it holds, so a
      // patch recomputes the containers on the changed paths and reuses every other subtree's text.
      if (cache && Object.isFrozen(value)) {
        text.charCodeAt(0); // flattens the rope in V8: hashing a 600 KB tree of ropes costs 20 ms, flat 1 ms
        cache.set(value, text);
      }
      return text;
    }
    default:
      throw new TypeError(`a ${typeof value} has no JSON form`);
  }
}

/** Freezes every container of `value` down to the already frozen ones (a patched tree's shared subtrees). */
export function deepFreeze(value) {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze(value[key]);
  return value;
}

// MARK: - UTF-8 and SHA-256

const encoder = typeof TextEncoder === "function" ? new TextEncoder() : null;

/** UTF-8 bytes of a string (TextEncoder where present; a lone surrogate becomes U+FFFD either way). */
export function utf8(text) {
  if (encoder) return encoder.encode(text);
  const bytes = new Uint8Array(text.length * 3);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) bytes[n++] = c;
    else if (c < 0x800) (bytes[n++] = 0xc0 | (c >> 6)), (bytes[n++] = 0x80 | (c & 63));
    else if (c < 0x10000) (bytes[n++] = 0xe0 | (c >> 12)), (bytes[n++] = 0x80 | ((c >> 6) & 63)), (bytes[n++] = 0x80 | (c & 63));
    else {
      bytes[n++] = 0xf0 | (c >> 18);
      bytes[n++] = 0x80 | ((c >> 12) & 63);
      bytes[n++] = 0x80 | ((c >> 6) & 63);
      bytes[n++] = 0x80 | (c & 63);
    }
  }
  return bytes.subarray(0, n);
}

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

/** SHA-256 (FIPS 180-4) in plain JavaScript, for platforms without SubtleCrypto (React Native). */
export function sha256(bytes) {
  const length = bytes.length;
  const blocks = ((length + 8) >>> 6) + 1;
  const padded = new Uint8Array(blocks * 64);
  padded.set(bytes);
  padded[length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(length / 0x20000000));
  view.setUint32(padded.length - 4, (length << 3) >>> 0);
  const w = new Int32Array(64);
  let h0 = 0x6a09e667, h1 = 0xbb67ae85 | 0, h2 = 0x3c6ef372, h3 = 0xa54ff53a | 0;
  let h4 = 0x510e527f, h5 = 0x9b05688c | 0, h6 = 0x1f83d9ab, h7 = 0x5be0cd19;
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let i = 0, j = offset; i < 16; i++, j += 4) {
      w[i] = (padded[j] << 24) | (padded[j + 1] << 16) | (padded[j + 2] << 8) | padded[j + 3];
    }
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15], b = w[i - 2];
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i] + w[i]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0; h1 = (h1 + b) | 0; h2 = (h2 + c) | 0; h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0; h5 = (h5 + f) | 0; h6 = (h6 + g) | 0; h7 = (h7 + h) | 0;
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  [h0, h1, h2, h3, h4, h5, h6, h7].forEach((v, i) => outView.setInt32(i * 4, v));
  return out;
}

function hex(bytes) {
  let text = "";
  for (let i = 0; i < bytes.length; i++) text += (bytes[i] < 16 ? "0" : "") + bytes[i].toString(16);
  return text;
}

function subtleCrypto() {
  const c = globalThis.crypto;
  return c && c.subtle && typeof c.subtle.digest === "function" ? c.subtle : null;
}

/** Lowercase hex SHA-256 of a string's UTF-8 bytes: SubtleCrypto where present, else the built-in `sha256`. */
export async function sha256Hex(text, { builtIn = false } = {}) {
  const bytes = digestInput(text);
  const subtle = builtIn ? null : subtleCrypto();
  // digest() copies its input before it returns a promise, so the scratch buffer is free again.
  return hex(subtle ? new Uint8Array(await subtle.digest("SHA-256", bytes)) : sha256(bytes));
}

let scratch = new Uint8Array(0);

/** UTF-8 bytes of `text` in a buffer reused from call to call (valid until the next call): a
 *  fresh 600 KB array per patch costs more than the encoding itself. */
function digestInput(text) {
  if (!encoder || typeof encoder.encodeInto !== "function") return utf8(text);
  if (scratch.length < text.length * 3) scratch = new Uint8Array(text.length * 3);
  const { written } = encoder.encodeInto(text, scratch);
  return scratch.subarray(0, written);
}

/** The screen hash of DESIGN §4: lowercase hex SHA-256 of the tree's RFC 8785 form. */
export function screenHash(tree, options) {
  return sha256Hex(canonicalize(tree), options);
}

// MARK: - Storage

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

function defaultStorage() {
  try {
    const storage = globalThis.localStorage; // throws where storage is blocked (sandboxed frames, some private modes)
    if (storage) return storage;
  } catch {}
  return new MemoryStorage();
}

// MARK: - Storage scope: per user, per hub state (epoch)

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

/** A scope's record, `<scope>:epoch` → `{"epoch","last_sync"}`: the hub state its keys belong to. */
async function readScopeRecord(storage, key) {
  try {
    const record = JSON.parse((await storage.getItem(key)) || "null");
    if (record && typeof record.epoch === "string") {
      return { epoch: record.epoch, lastSync: Number.isSafeInteger(record.last_sync) ? record.last_sync : undefined };
    }
  } catch {} // unreadable is as good as absent: a fresh start
  return { epoch: undefined, lastSync: undefined };
}

/** A screen as stored: `{"epoch","hash","tree","version"}` in canonical member order around the tree's canonical form. */
function storedScreen(epoch, hash, canonicalTree, version) {
  return (epoch === undefined ? "{" : `{"epoch":${JSON.stringify(epoch)},`) +
    `"hash":${JSON.stringify(hash)},"tree":${canonicalTree},"version":${version}}`;
}

// MARK: - HTTP fetch (DESIGN §12)

/**
 * A failed `fetchScreen`. `code` is the hub's error code when the hub answered ("unauthorized"
 * 401, "unknown_screen" 404, "bad_app_version" 400, …: its JSON body `{"error":{"code"}}`);
 * "http_<status>" for an answer that is not the hub's (a proxy's or load balancer's 404 or 502:
 * no such body); "mismatch" (the body's tree does not hash to its hash); "network" (no answer,
 * status 0); "http" (a 200 that is not a screen, a 304 for a tree not held).
 */
export class FetchError extends Error {
  constructor(code, message, status) {
    super(message);
    this.name = "FetchError";
    this.code = code;
    this.status = status;
  }
}

/** The FetchError for an error status: the hub's code and message from its JSON body, else `http_<status>`. */
function answerError(path, status, text) {
  let error = null;
  try {
    const body = JSON.parse(text);
    if (body && body.error && typeof body.error.code === "string") error = body.error;
  } catch {}
  if (error) return new FetchError(error.code, `GET ${path}: ${status} ${error.code}: ${error.message ?? ""}`.trim(), status);
  const excerpt = text.slice(0, 200).replace(/\s+/g, " ").trim();
  return new FetchError(`http_${status}`,
    `GET ${path}: not a PushHub answer (HTTP ${status} from a proxy?)${excerpt ? ": " + excerpt : ""}`, status);
}

/** The HTTP URL of `GET /v1/screens/{name}` on the host of a WebSocket URL (ws → http, wss → https; a path prefix before /v1/connect is kept). */
export function screenURL(url, name) {
  const base = new URL(url);
  if (base.protocol === "ws:") base.protocol = "http:";
  else if (base.protocol === "wss:") base.protocol = "https:";
  const prefix = base.pathname.endsWith("/v1/connect") ? base.pathname.slice(0, -"/v1/connect".length) : "";
  base.pathname = prefix + "/v1/screens/" + String(name).split("/").map(encodeURIComponent).join("/");
  base.search = "";
  base.hash = "";
  return base;
}

/** The stored tree of a screen if it belongs to `epoch` and still hashes to its stored hash (else it is dropped); null when there is none. */
async function readCached(storage, key, epoch) {
  try {
    const text = await storage.getItem(key);
    if (!text) return null;
    try {
      const saved = JSON.parse(text);
      if ((saved.epoch ?? undefined) === epoch && typeof saved.hash === "string" && (await screenHash(saved.tree)) === saved.hash) {
        return saved;
      }
    } catch {}
    await storage.removeItem(key);
  } catch {} // a blocked storage: fetch without If-None-Match
  return null;
}

/**
 * Fetches one screen over HTTP without holding a socket (widgets, background refresh, a poll):
 * `GET /v1/screens/{name}` on the hub's client listener, as the client these options describe
 * (`token` as `Authorization: Bearer`, else `device` — generated and kept in `storage` like
 * PushHub's — and `app.platform`/`app.version`). The tree kept in `storage` (the same entry
 * PushHub keeps, in this user's scope and labelled with the hub state (epoch) the user's storage
 * last saw, so a PushHub created later in that state starts from it and resumes with `have`) is
 * sent as `If-None-Match`; a 304 returns it. A 200's tree is checked against its hash and stored.
 * Resolves to `{ screen, tree, version, hash, status }` (status 200 or 304); rejects with `FetchError`.
 */
export async function fetchScreen(name, options) {
  if (!options || typeof options.url !== "string") throw new TypeError("fetchScreen needs { url: 'wss://host/v1/connect' }");
  const storage = options.storage || defaultStorage();
  const prefix = (options.storageKey || "pushhub") + ":";
  let token = options.token;
  if (typeof token === "function") token = await token();
  let device = options.device;
  if (!device && !token) device = await storedDevice(storage, prefix);
  const scope = prefix + storageScope(token, device) + ":";
  const { epoch } = await readScopeRecord(storage, scope + "epoch");
  return fetchScreenAs(name, { ...options, token, device, storage, scope, epoch, held: undefined });
}

/** `fetchScreen` with everything resolved: `scope` is the key prefix of the user's storage, `epoch` the hub state it belongs to. */
async function fetchScreenAs(name, { url, token, device, app, storage, scope, epoch, held, fetch: fetchImpl, signal }) {
  const doFetch = fetchImpl || globalThis.fetch;
  if (typeof doFetch !== "function") throw new TypeError("no fetch here: pass options.fetch");
  const target = screenURL(url, name);
  if (!token && device) target.searchParams.set("device", device);
  if (app && app.platform) target.searchParams.set("platform", app.platform);
  if (app && app.version) target.searchParams.set("app_version", app.version);
  const key = scope + "screen:" + name;
  const cached = held || (await readCached(storage, key, epoch));
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = "Bearer " + token;
  if (cached) headers["If-None-Match"] = '"' + cached.hash + '"';
  let response;
  try {
    // no-store: the cache is `storage`, revalidated by the If-None-Match above; the browser's own
    // HTTP cache stays out of it (and hands the 304 to us).
    response = await doFetch(target.href, { headers, cache: "no-store", signal });
  } catch (error) {
    if (error && error.name === "AbortError") throw error;
    throw new FetchError("network", `GET ${target.pathname}: ${error}`, 0);
  }
  if (response.status === 304 && cached) {
    return { screen: name, tree: cached.tree, version: cached.version, hash: cached.hash, status: 304 };
  }
  if (response.status !== 200) {
    if (response.status === 304) throw new FetchError("http", `GET ${target.pathname}: 304 for a tree this client does not hold`, 304);
    throw answerError(target.pathname, response.status, await response.text().catch(() => ""));
  }
  let body;
  try {
    body = await response.json();
  } catch (error) {
    throw new FetchError("http", `GET ${target.pathname}: the answer is not JSON: ${error}`, 200);
  }
  if (!body || typeof body.hash !== "string" || typeof body.version !== "number" || !hasOwn.call(body, "tree")) {
    throw new FetchError("http", `GET ${target.pathname}: not a screen`, 200);
  }
  const tree = deepFreeze(body.tree);
  const canonical = canonicalize(tree);
  if ((await sha256Hex(canonical)) !== body.hash) {
    throw new FetchError("mismatch", `GET ${target.pathname}: the tree does not hash to ${body.hash}`, 200);
  }
  try {
    await storage.setItem(key, storedScreen(epoch, body.hash, canonical, body.version));
  } catch {} // a full or blocked storage only costs the next fetch its 304
  return { screen: name, tree, version: body.version, hash: body.hash, status: 200 };
}

/** The device id kept in `storage` (generated once): the unit anonymous clients are bucketed by. */
async function storedDevice(storage, prefix) {
  let device = null;
  try {
    device = await storage.getItem(prefix + "device");
  } catch {}
  if (!device) {
    device = randomID();
    try {
      await storage.setItem(prefix + "device", device);
    } catch {}
  }
  return device;
}

function randomID() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === "function") return "d-" + c.randomUUID();
  return "d-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
}

// MARK: - The client

/** Close codes the hub sends (docs/protocol.md); any other code is passed through as is. */
export const CloseCodes = Object.freeze({
  normal: 1000,
  goingAway: 1001, // the hub shuts down: reconnect
  abnormal: 1006, // no close frame (network drop, refused upgrade, hub killed): reconnect
  policyViolation: 1008, // hello timeout, unauthorized, rate or outbound limit: reconnect with backoff
  messageTooBig: 1009,
});

const MAX_REMEMBERED_SYNCS = 1000;

/** `heartbeat_s` until a welcome says otherwise (the hub's default ping interval, docs/protocol.md). */
const DEFAULT_HEARTBEAT_S = 25;

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

/** Milliseconds from a clock that does not jump with the wall clock (performance.now where present). */
function monotonicNow() {
  const p = globalThis.performance;
  return p && typeof p.now === "function" ? p.now() : Date.now();
}

/** Forgets what a screen entry held (another user's or another hub state's tree): nothing of it is shown or sent as `have` again. */
function forgetTree(entry) {
  entry.tree = entry.version = entry.hash = entry.delivered = entry.savedVersion = undefined;
  entry.resyncing = entry.pending = false;
}

/**
 * One connection to a hub, kept up until `close()`. See pushhub-client.d.ts for the options,
 * events and the meaning of each field.
 *
 * Invariants: at most one WebSocket at a time (`_generation` names it; events of older sockets are
 * ignored); a screen entry's `version`/`hash` describe `tree` exactly, or are undefined while
 * the client waits for a snapshot (`resyncing`).
 */
export class PushHub {
  constructor(options) {
    if (!options || typeof options.url !== "string") throw new TypeError("PushHub needs { url: 'wss://host/v1/connect' }");
    this.url = options.url;
    this._options = options;
    this._WebSocket = options.WebSocket || globalThis.WebSocket;
    if (typeof this._WebSocket !== "function") throw new TypeError("no WebSocket here: pass options.WebSocket");
    this._storage = options.storage || defaultStorage();
    this._prefix = (options.storageKey || "pushhub") + ":";
    this._random = options.random || Math.random;
    this._backoff = { ...DEFAULT_BACKOFF, ...(options.backoff || {}) };
    this._now = options.now || monotonicNow;
    this._autoRendered = options.autoRendered !== false;
    this._builtInHash = options.hash === "built-in";
    this._forms = new WeakMap(); // frozen container → its canonical form (see canonicalize)
    this._state = "connecting";
    this._listeners = new Map(); // event type → Set of listeners
    this._syncHandlers = new Set();
    this._screens = new Map(); // screen name → entry
    this._queue = Promise.resolve(); // the in-order task chain
    this._generation = 0;
    this._socket = null;
    this._attempt = 0; // failed attempts since the last welcome: the backoff exponent
    this._goingAwayAt = null; // when the hub last closed with 1001 (restarting), until the next welcome
    this._reconnectTimer = null;
    this._heardAt = 0; // when the current socket last brought anything (this._now())
    this._livenessTimer = null;
    this._heartbeatS = DEFAULT_HEARTBEAT_S; // the last welcome's heartbeat_s
    this._scope = undefined; // the storage scope ("user:…" or "device:…") of the current user
    this._scoped = new Promise((resolve) => (this._enteredScope = resolve)); // resolved once a scope is known
    this._epoch = undefined; // the hub state this scope's stored screens and last_sync belong to
    this._fatal = null; // an error after which reconnecting cannot help
    this._pendingSubscribes = []; // screens whose subscribe awaits its first answer, in order
    this._pendingRendered = new Map(); // screen → version, sent once live
    this._pendingAcks = new Set();
    this._seenSyncs = new Map(); // id → seq, the last MAX_REMEMBERED_SYNCS
    this._waitingSyncs = new Map(); // id → { seq, timer }
    this._syncMax = undefined;
    this._savedLastSync = undefined;
    /** Counters for the app's diagnostics (and the tests). */
    this.stats = {
      connects: 0, welcomes: 0, snapshots: 0, patches: 0, unchanged: 0, resubscribes: 0, syncs: 0, duplicateSyncs: 0,
      pending: 0, deadLinks: 0, epochChanges: 0,
    };
    /** `welcome` of the current session: { session, user, heartbeat_s, sync_seq, epoch }. */
    this.session = null;
    this._ready = this._load();
    this._online = () => this._state === "reconnecting" && this._reconnectTimer && this._reconnectNow();
    if (typeof globalThis.addEventListener === "function") globalThis.addEventListener("online", this._online);
    this._open();
  }

  /** "connecting" (first connection), "live" (welcomed), "reconnecting" (waiting or retrying), "closed". */
  get state() {
    return this._state;
  }

  /** The last `sync` seq this client has fully handled (sent as hello.last_sync). */
  get lastSync() {
    return this._savedLastSync;
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
   * Subscribes to a screen. `onTree(tree, { version, hash, source })` is called with each new
   * tree: `source` is "cache" (from storage, before the hub confirmed it), "snapshot", "patch" or
   * "unchanged" (the cached tree is current). Trees are frozen (the client reuses the canonical
   * form of unchanged subtrees); a patch copies only the containers on its paths, so unchanged
   * subtrees keep their identity from one version to the next.
   */
  subscribe(screen, onTree) {
    let entry = this._screens.get(screen);
    if (!entry) {
      entry = {
        screen, listeners: new Set(), tree: undefined, version: undefined, hash: undefined, delivered: undefined,
        resyncing: false, pending: false,
      };
      this._screens.set(screen, entry);
      entry.loaded = this._loadScreen(entry);
      if (this._state === "live") {
        const generation = this._generation;
        this._enqueue(generation, async () => {
          await entry.loaded;
          if (this._screens.get(screen) === entry) this._sendSubscribe(entry);
        });
      }
    } else if (entry.tree !== undefined && onTree) {
      const meta = { version: entry.version, hash: entry.hash, source: entry.delivered === undefined ? "cache" : "snapshot" };
      Promise.resolve().then(() => entry.listeners.has(onTree) && this._call(onTree, entry.tree, meta));
    }
    if (onTree) entry.listeners.add(onTree);
    const hub = this;
    return {
      screen,
      get tree() { return entry.tree; },
      get version() { return entry.version; },
      get hash() { return entry.hash; },
      get pending() { return entry.pending; },
      close() {
        entry.listeners.delete(onTree);
        if (entry.listeners.size > 0 || hub._screens.get(screen) !== entry) return;
        hub._screens.delete(screen);
        if (hub._state === "live") hub._send({ type: "unsubscribe", screen });
      },
    };
  }

  /**
   * `fetchScreen(name)` as this client (its token, device, app and storage): an HTTP GET of the
   * screen with `If-None-Match` the hash this client holds. Needs no live connection; a
   * subscription keeps following the socket (the fetched tree goes to storage only).
   */
  async fetchScreen(screen, { signal } = {}) {
    await this._ready;
    let token = this._options.token;
    if (typeof token === "function") token = await token();
    const entry = this._screens.get(screen);
    const held = entry && entry.tree !== undefined && entry.hash !== undefined
      ? { tree: entry.tree, version: entry.version, hash: entry.hash } : undefined;
    await this._scoped;
    return fetchScreenAs(screen, {
      url: this.url, token, device: this._device, app: this._options.app, storage: this._storage,
      scope: this._prefix + this._scope + ":", epoch: this._epoch, held, fetch: this._options.fetch, signal,
    });
  }

  /** Tells the hub the app drew `version` of `screen` (confirms experiment exposures, DESIGN §6). */
  rendered(screen, version) {
    if (this._state === "live") this._send({ type: "rendered", screen, version });
    else this._pendingRendered.set(screen, version);
  }

  /** Closes the connection for good; state becomes "closed". */
  close() {
    if (this._state === "closed") return;
    this._generation++;
    clearTimeout(this._reconnectTimer);
    clearTimeout(this._livenessTimer);
    for (const waiting of this._waitingSyncs.values()) clearTimeout(waiting.timer);
    this._waitingSyncs.clear();
    if (typeof globalThis.removeEventListener === "function") globalThis.removeEventListener("online", this._online);
    const socket = this._socket;
    this._socket = null;
    this._setState("closed");
    if (socket) {
      try { socket.close(1000); } catch {}
    }
    this._emit("close", { code: 1000, reason: "closed by the app", reconnect: false });
  }

  // MARK: connection

  async _load() {
    this._device = this._options.device;
    if (!this._device && !this._options.token) this._device = await storedDevice(this._storage, this._prefix);
    // From clients before storage scopes, whose user is unknown: never read, removed.
    this._storageCall(() => this._storage.removeItem(this._prefix + "last_sync"));
    if (typeof this._options.token !== "function") await this._enterScope(storageScope(this._options.token, this._device));
  }

  /**
   * Makes `scope` (a user, or an anonymous device) the one whose storage the client uses: its
   * epoch and last_sync from storage, and each subscribed screen reloaded from it. What the client
   * held for another user is forgotten, never shown or sent as `have` for this one.
   */
  async _enterScope(scope) {
    const { epoch, lastSync } = await readScopeRecord(this._storage, this._prefix + scope + ":epoch");
    this._scope = scope;
    this._epoch = epoch;
    this._forgetSyncs();
    this._savedLastSync = this._syncMax = lastSync;
    for (const entry of this._screens.values()) {
      forgetTree(entry);
      entry.loaded = this._loadScreen(entry);
    }
    this._enteredScope();
  }

  /** Sync and rendered bookkeeping that belongs to one user in one hub state. */
  _forgetSyncs() {
    this._seenSyncs.clear();
    this._pendingAcks.clear();
    this._pendingRendered.clear(); // a version drawn for another user or state confirms nothing here
    for (const waiting of this._waitingSyncs.values()) {
      waiting.forgotten = true; // handed to the app when its wait ends, never acked to this hub
      waiting.seq = undefined; // counted in another state: no bound on last_sync here
    }
  }

  async _open() {
    const generation = ++this._generation;
    await this._ready;
    let token = this._options.token;
    if (typeof token === "function") {
      try {
        token = await token();
      } catch (error) {
        if (generation === this._generation) this._emit("error", { code: "token", message: String(error), ref: null });
        token = undefined;
      }
      // The user the token names (a failed call keeps the current one).
      const scope = token ? storageScope(token, this._device) : this._scope;
      if (scope !== this._scope && generation === this._generation) await this._enterScope(scope);
    }
    if (generation !== this._generation || this._state === "closed") return;
    let socket;
    this.stats.connects++;
    try {
      socket = new this._WebSocket(this.url, "pushhub.v1");
    } catch (error) {
      this._emit("error", { code: "connect", message: String(error), ref: null });
      return this._closed(generation, CloseCodes.abnormal, String(error));
    }
    this._socket = socket;
    this._watchLink(generation);
    socket.onopen = () => {
      if (generation !== this._generation) return;
      const hello = { type: "hello", protocol: PROTOCOL, heartbeat: true };
      if (token) hello.token = token;
      if (this._device) hello.device = this._device;
      if (this._options.app) hello.app = this._options.app;
      if (this._epoch !== undefined) hello.epoch = this._epoch;
      if (this._savedLastSync !== undefined) hello.last_sync = this._savedLastSync;
      this._send(hello);
    };
    socket.onmessage = (event) => {
      if (generation !== this._generation) return;
      this._heardAt = this._now();
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return this._emit("error", { code: "client_bad_json", message: "the hub sent text that is not JSON", ref: null });
      }
      if (message.type === "heartbeat") return; // it only proves the link is alive
      this._enqueue(generation, () => this._handle(message, generation));
    };
    socket.onclose = (event) => this._closed(generation, event.code, event.reason);
    socket.onerror = () => {}; // a close event follows, with its code
  }

  /**
   * The socket of `generation` brought something (or just opened): the link is dead if nothing
   * more arrives for 2 × heartbeat_s + 2 s (the hub sends a heartbeat every heartbeat_s when it
   * has nothing else queued). One timer per socket, re-armed only when it fires early.
   */
  _watchLink(generation) {
    this._heardAt = this._now();
    clearTimeout(this._livenessTimer);
    const limitMs = (2 * this._heartbeatS + 2) * 1000;
    const check = () => {
      if (generation !== this._generation) return;
      const silentMs = this._now() - this._heardAt;
      if (silentMs < limitMs) return void (this._livenessTimer = setTimeout(check, limitMs - silentMs));
      this.stats.deadLinks++;
      const socket = this._socket;
      this._closed(generation, CloseCodes.abnormal,
        `nothing from the hub for ${(silentMs / 1000).toFixed(1)} s (heartbeat every ${this._heartbeatS} s): the link is dead`);
      if (socket) {
        // Stop using it at once: its events are ignored (old generation), no close handshake awaited.
        socket.onopen = socket.onmessage = socket.onclose = socket.onerror = null;
        try { socket.close(); } catch {}
      }
    };
    this._livenessTimer = setTimeout(check, limitMs);
  }

  _closed(generation, code, reason) {
    if (generation !== this._generation || this._state === "closed") return;
    this._generation++; // drops what the old socket had queued
    clearTimeout(this._livenessTimer);
    this._socket = null;
    this._pendingSubscribes = [];
    this.session = null;
    if (this._fatal) {
      this._setState("closed");
      return this._emit("close", { code, reason, reconnect: false, error: this._fatal });
    }
    const now = this._now();
    if (code === CloseCodes.goingAway) {
      // The hub is restarting (or draining to another): it is expected back soon, so retry from
      // the first step again, with the short ceiling of a restart.
      this._goingAwayAt = now;
      this._attempt = 0;
    }
    const restarting = this._goingAwayAt !== null && now - this._goingAwayAt < this._backoff.goingAwayWindowMs;
    const delayMs = reconnectDelay(this._backoff, this._attempt, restarting, this._random());
    this._attempt++;
    this._setState("reconnecting");
    this._emit("close", { code, reason, reconnect: true, delayMs, attempt: this._attempt });
    this._reconnectTimer = setTimeout(() => this._reconnectNow(), delayMs);
  }

  _reconnectNow() {
    clearTimeout(this._reconnectTimer);
    this._reconnectTimer = null;
    if (this._state !== "closed") this._open();
  }

  _enqueue(generation, task) {
    this._queue = this._queue
      .then(() => (generation === this._generation ? task() : undefined))
      .catch((error) => this._report(error));
  }

  _send(message) {
    if (!this._socket || this._socket.readyState !== 1) return false;
    this._socket.send(JSON.stringify(message));
    return true;
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

  // MARK: messages

  async _handle(message, generation) {
    switch (message.type) {
      case "welcome":
        return this._welcome(message, generation);
      case "snapshot":
      case "patch":
      case "unchanged":
        return this._screenMessage(message);
      case "gone": {
        const entry = this._screens.get(message.screen);
        this._answered(message.screen);
        if (!entry) return;
        this._screens.delete(message.screen);
        this._remove("screen:" + message.screen);
        return this._emit("gone", { screen: message.screen });
      }
      case "pending":
        return this._pending(message);
      case "sync":
        return this._sync(message);
      case "error": {
        const event = { code: message.code, message: message.message, ref: message.ref ?? null };
        if (message.ref === "subscribe" && this._pendingSubscribes.length) {
          // A refused subscribe (unknown_screen, invalid_screen_name) did not subscribe: the entry
          // and its cached tree go, so calling subscribe() again (e.g. once the screen is
          // published) asks again.
          event.screen = this._pendingSubscribes.shift();
          if (this._screens.delete(event.screen)) this._remove("screen:" + event.screen);
        }
        if (message.code === "unsupported_protocol" || (message.code === "unauthorized" && typeof this._options.token !== "function")) {
          this._fatal = event;
        }
        return this._emit("error", event);
      }
      default:
        return; // a newer hub's message: ignored (forward compatibility)
    }
  }

  async _welcome(message, generation) {
    const epoch = typeof message.epoch === "string" ? message.epoch : undefined;
    this.session = {
      session: message.session, user: message.user, heartbeat_s: message.heartbeat_s, sync_seq: message.sync_seq, epoch,
    };
    this._attempt = 0;
    this._goingAwayAt = null;
    this._fatal = null;
    this.stats.welcomes++;
    if (epoch === undefined) {
      // A hub from before heartbeats (it names no epoch either) sends pings only, which a page
      // cannot see: silence proves nothing there, so the link is not watched.
      clearTimeout(this._livenessTimer);
    } else if (Number.isFinite(message.heartbeat_s) && message.heartbeat_s > 0 && message.heartbeat_s !== this._heartbeatS) {
      this._heartbeatS = message.heartbeat_s;
      this._watchLink(generation); // the deadline of the hub's own heartbeat interval
    }
    const epochChanged = epoch !== this._epoch;
    if (epochChanged && this._epoch !== undefined) {
      // Another hub state (a reset data dir, another cluster): versions and sync seqs counted in
      // the old one mean nothing here. Nothing stored is sent as `have` or shown again.
      this.stats.epochChanges++;
      for (const entry of this._screens.values()) {
        forgetTree(entry);
        this._remove("screen:" + entry.screen);
      }
      this._forgetSyncs();
      this._syncMax = this._savedLastSync = undefined;
    }
    this._epoch = epoch;
    if (this._syncMax === undefined && typeof message.sync_seq === "number") this._syncMax = message.sync_seq;
    this._saveLastSync(epochChanged);
    this._setState("live");
    this._emit("welcome", this.session);
    for (const entry of this._screens.values()) {
      await entry.loaded;
      if (generation !== this._generation) return;
      if (this._screens.get(entry.screen) === entry) this._sendSubscribe(entry);
    }
    for (const [screen, version] of this._pendingRendered) this._send({ type: "rendered", screen, version });
    this._pendingRendered.clear();
    for (const id of this._pendingAcks) this._send({ type: "ack", sync: id });
    this._pendingAcks.clear();
  }

  _sendSubscribe(entry) {
    const message = { type: "subscribe", screen: entry.screen };
    if (entry.version !== undefined && entry.hash !== undefined) message.have = { version: entry.version, hash: entry.hash };
    else entry.resyncing = true; // until a snapshot arrives, patches cannot apply
    this._pendingSubscribes.push(entry.screen);
    this._send(message);
  }

  _answered(screen) {
    const index = this._pendingSubscribes.indexOf(screen);
    if (index >= 0) this._pendingSubscribes.splice(index, 1);
  }

  /** The hub has no version of the screen yet: the subscription stays, its first publish brings a snapshot. */
  _pending(message) {
    const entry = this._screens.get(message.screen);
    this._answered(message.screen);
    if (!entry) return;
    this.stats.pending++;
    if (entry.tree !== undefined || entry.savedVersion !== undefined) {
      // What this client held is of a screen the hub no longer has (deleted while it was away).
      forgetTree(entry);
      this._remove("screen:" + entry.screen);
    }
    entry.pending = true;
    entry.resyncing = true; // only the snapshot can follow
    this._emit("pending", { screen: entry.screen });
  }

  async _screenMessage(message) {
    const entry = this._screens.get(message.screen);
    this._answered(message.screen);
    if (!entry) return; // unsubscribed meanwhile
    if (message.type === "snapshot") {
      this.stats.snapshots++;
      const { hash, canonical } = await this._hash(message.tree);
      if (hash !== message.hash) {
        // The hub is the authority for the tree; a differing hash means the two canonical forms
        // disagree, and resubscribing would loop. Keep the hub's hash so `have` still resumes.
        this._emit("mismatch", { screen: entry.screen, version: message.version, expected: message.hash, actual: hash, source: "snapshot" });
      }
      entry.resyncing = entry.pending = false;
      return this._accept(entry, message.tree, message.version, message.hash, "snapshot", canonical);
    }
    if (message.type === "unchanged") {
      this.stats.unchanged++;
      if (entry.tree === undefined) return this._resubscribe(entry, "no_tree", message);
      entry.resyncing = false;
      return this._accept(entry, entry.tree, message.version, message.hash, "unchanged", null);
    }
    this.stats.patches++;
    if (entry.resyncing) return; // a patch sent before our resubscribe: the snapshot follows
    if (entry.tree === undefined || entry.version !== message.from) return this._resubscribe(entry, "unexpected_from", message);
    let tree;
    try {
      tree = applyPatch(entry.tree, message.ops);
    } catch (error) {
      return this._resubscribe(entry, "patch_failed", message, error.message);
    }
    const { hash, canonical } = await this._hash(tree);
    if (hash !== message.hash) {
      this._emit("mismatch", { screen: entry.screen, version: message.version, expected: message.hash, actual: hash, source: "patch" });
      return this._resubscribe(entry, "hash_mismatch", message);
    }
    return this._accept(entry, tree, message.version, message.hash, "patch", canonical);
  }

  async _hash(tree) {
    deepFreeze(tree);
    const canonical = canonicalize(tree, this._forms);
    return { hash: await sha256Hex(canonical, { builtIn: this._builtInHash }), canonical };
  }

  _resubscribe(entry, reason, message, detail) {
    this.stats.resubscribes++;
    const event = { screen: entry.screen, reason, held: entry.version, from: message.from, version: message.version };
    if (detail) event.detail = detail;
    entry.version = entry.hash = undefined; // keep `tree` for the app until the snapshot replaces it
    this._emit("resubscribe", event);
    if (this._state === "live") this._sendSubscribe(entry);
  }

  _accept(entry, tree, version, hash, source, canonical) {
    const changed = entry.delivered !== version || entry.tree !== tree;
    entry.tree = tree;
    entry.version = version;
    entry.hash = hash;
    if (canonical !== null || entry.savedVersion !== version) {
      canonical = canonical ?? canonicalize(tree, this._forms);
      entry.savedVersion = version;
      this._write("screen:" + entry.screen, storedScreen(this._epoch, hash, canonical, version));
    }
    if (!changed) return;
    entry.delivered = version;
    const meta = { version, hash, source };
    const results = [...entry.listeners].map((listener) => this._call(listener, tree, meta));
    if (this._autoRendered) {
      Promise.all(results).then(() => {
        if (entry.version === version && this._screens.get(entry.screen) === entry) this.rendered(entry.screen, version);
      });
    }
  }

  /** Shows the stored tree of `entry` (source "cache") if it is this user's, of the hub state last seen, and hashes right. */
  async _loadScreen(entry) {
    await this._scoped;
    const scope = this._scope;
    const key = "screen:" + entry.screen;
    const text = await this._read(key);
    if (!text || scope !== this._scope) return;
    try {
      const saved = JSON.parse(text);
      // Saved in another hub state (or in none known): neither shown nor sent as `have`.
      if (typeof saved.epoch !== "string" || saved.epoch !== this._epoch) return this._remove(key);
      if ((await this._hash(saved.tree)).hash !== saved.hash) return this._remove(key);
      if (entry.tree !== undefined || scope !== this._scope || saved.epoch !== this._epoch) return;
      entry.tree = saved.tree;
      entry.version = entry.savedVersion = saved.version;
      entry.hash = saved.hash;
      const meta = { version: saved.version, hash: saved.hash, source: "cache" };
      for (const listener of entry.listeners) this._call(listener, entry.tree, meta);
    } catch {
      this._remove(key);
    }
  }

  // MARK: syncs

  _sync(message) {
    this.stats.syncs++;
    if (this._seenSyncs.has(message.id)) {
      this.stats.duplicateSyncs++;
      return;
    }
    this._seenSyncs.set(message.id, message.seq);
    if (this._seenSyncs.size > MAX_REMEMBERED_SYNCS) this._seenSyncs.delete(this._seenSyncs.keys().next().value);
    if (typeof message.seq === "number" && !(this._syncMax >= message.seq)) this._syncMax = message.seq;
    const delayMs = Math.floor(this._random() * (message.jitter_ms || 0));
    const sync = {
      id: message.id, seq: message.seq, reason: message.reason, scope: message.scope, hint: message.hint,
      mandatory: message.mandatory === true, jitterMs: message.jitter_ms, delayMs, receivedAt: Date.now(),
    };
    const waiting = { seq: message.seq, timer: null, forgotten: false };
    this._waitingSyncs.set(message.id, waiting);
    this._saveLastSync(); // a replay below last_sync (a first welcome, an epoch change) lowers it until handled
    waiting.timer = setTimeout(async () => {
      await Promise.all([...this._syncHandlers].map((handler) => this._call(handler, sync)));
      if (this._state === "closed" || this._waitingSyncs.get(message.id) !== waiting) return;
      this._waitingSyncs.delete(message.id);
      if (waiting.forgotten) return; // of another user or hub state: this hub does not know its id
      this._saveLastSync();
      if (!this._send({ type: "ack", sync: message.id })) this._pendingAcks.add(message.id);
    }, delayMs);
  }

  /**
   * last_sync = every sync up to it was handed to the app: a reload during a jitter wait gets it
   * again. Kept with the epoch it counts in (`force`: write the record although the value is the same).
   */
  _saveLastSync(force = false) {
    let value = this._syncMax;
    for (const waiting of this._waitingSyncs.values()) {
      if (typeof waiting.seq === "number" && waiting.seq - 1 < value) value = waiting.seq - 1;
    }
    if (value === this._savedLastSync && !force) return;
    this._savedLastSync = value;
    if (this._epoch === undefined) return; // a hub without epochs: nothing to resume from later
    const record = { epoch: this._epoch };
    if (value !== undefined) record.last_sync = value;
    this._write("epoch", JSON.stringify(record));
  }

  // MARK: storage: keys inside the current user's scope

  async _read(key) {
    try {
      return await this._storage.getItem(this._prefix + this._scope + ":" + key);
    } catch (error) {
      this._emit("error", { code: "storage", message: String(error), ref: null });
      return null;
    }
  }

  _write(key, value) {
    const full = this._prefix + this._scope + ":" + key;
    this._storageCall(() => this._storage.setItem(full, value));
  }

  _remove(key) {
    const full = this._prefix + this._scope + ":" + key;
    this._storageCall(() => this._storage.removeItem(full));
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
