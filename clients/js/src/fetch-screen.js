// HTTP fetch of one screen (DESIGN §12) for code that cannot hold a socket: `GET /v1/screens/{name}`
// with the stored tree's hash as If-None-Match, sharing the storage a PushHub keeps.

import { hasOwn } from "./json-patch.js";
import { canonicalize, deepFreeze } from "./canonical-json.js";
import { sha256Hex } from "./sha256.js";
import { screenHash } from "./screen-hash.js";
import { checkedComponents, componentsQuery } from "./component-capabilities.js";
import {
  defaultStorage, readScopeRecord, recordKey, screenKey, storageScope, storedDevice, storedScreen, variantMap,
} from "./storage.js";

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
 * The fetch's ETag for a tree and its variants (docs/protocol.md "HTTP fetch"): the hash, then,
 * when there are variants, "." and the first 16 hex digits of SHA-256 of their canonical JSON —
 * so a change of variants alone is not answered 304.
 */
async function fetchTag(hash, variants) {
  if (Object.keys(variants).length === 0) return hash;
  return hash + "." + (await screenHash(variants)).slice(0, 16);
}

/**
 * Fetches one screen over HTTP without holding a socket (widgets, background refresh, a poll):
 * `GET /v1/screens/{name}` on the hub's client listener, as the client these options describe
 * (`token` as `Authorization: Bearer`, else `device` — generated and kept in `storage` like
 * PushHub's — `app.platform`/`app.version`, and `components`, checked as PushHub checks it: a
 * bad list throws a TypeError). The tree kept in `storage` (the same entry
 * PushHub keeps, in this user's scope and labelled with the hub state (epoch) the user's storage
 * last saw, so a PushHub created later in that state starts from it and resumes with `have`) is
 * sent as `If-None-Match`; a 304 returns it. A 200's tree is checked against its hash and stored.
 * Resolves to `{ screen, tree, version, hash, variants, status }` (status 200 or 304; `variants`:
 * the experiments that shaped the tree, as with the tree when it was stored for a 304); rejects
 * with `FetchError`.
 */
export async function fetchScreen(name, options) {
  if (!options || typeof options.url !== "string") throw new TypeError("fetchScreen needs { url: 'wss://host/v1/connect' }");
  const storage = options.storage || defaultStorage();
  const prefix = (options.storageKey || "pushhub") + ":";
  let token = options.token;
  if (typeof token === "function") token = await token();
  let device = options.device;
  if (!device && !token) device = await storedDevice(storage, prefix);
  const scope = storageScope(token, device);
  const { epoch } = await readScopeRecord(storage, prefix + recordKey(scope));
  return fetchScreenAs(name, {
    ...options, components: checkedComponents(options.components), token, device, storage, prefix, scope, epoch, held: undefined,
  });
}

/**
 * `fetchScreen` with everything resolved: `prefix` (`<storageKey>:`) and `scope` name the user's
 * keys, `epoch` the hub state they belong to, `held` the tree a live client holds (else the stored
 * one), `components` a checked list (checkedComponents) or undefined.
 */
export async function fetchScreenAs(name, { url, token, device, app, components, storage, prefix, scope, epoch, held, fetch: fetchImpl, signal }) {
  const doFetch = fetchImpl || globalThis.fetch;
  if (typeof doFetch !== "function") throw new TypeError("no fetch here: pass options.fetch");
  const target = screenURL(url, name);
  if (!token && device) target.searchParams.set("device", device);
  if (app && app.platform) target.searchParams.set("platform", app.platform);
  if (app && app.version) target.searchParams.set("app_version", app.version);
  if (components !== undefined) target.searchParams.set("components", componentsQuery(components));
  const key = prefix + screenKey(scope, name);
  const cached = held || (await readCached(storage, key, epoch));
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = "Bearer " + token;
  if (cached) headers["If-None-Match"] = '"' + (await fetchTag(cached.hash, variantMap(cached.variants))) + '"';
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
    // The tree and its variants are current (the ETag names both: `fetchTag`).
    return { screen: name, tree: cached.tree, version: cached.version, hash: cached.hash, variants: variantMap(cached.variants), status: 304 };
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
  const variants = variantMap(body.variants);
  try {
    await storage.setItem(key, storedScreen(epoch, body.hash, canonical, body.version, variants));
  } catch {} // a full or blocked storage only costs the next fetch its 304
  return { screen: name, tree, version: body.version, hash: body.hash, variants, status: 200 };
}
