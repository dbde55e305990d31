// The admin API as the console uses it (DESIGN §7, docs/admin-api.md): the token the operator
// signed in with is kept in sessionStorage (this tab only, gone when it closes) and sent as a
// Bearer header on every call; it never appears in a URL.

const TOKEN_KEY = "pushhub-console:token";

/**
 * An error answer of the admin API: `{"error":{"code","message"}}` (or `{"error":code,
 * "message"}`) with its status, and `problems` (`[{path, message}]`) when the answer lists them
 * (422 invalid_variant_patch).
 */
export class ApiError extends Error {
  constructor(status, code, message, problems = []) {
    super(message);
    this.status = status;
    this.code = code;
    this.problems = problems;
  }
}

export const session = {
  get token() {
    try { return sessionStorage.getItem(TOKEN_KEY); } catch { return null; }
  },
  set token(value) {
    try {
      if (value) sessionStorage.setItem(TOKEN_KEY, value);
      else sessionStorage.removeItem(TOKEN_KEY);
    } catch {}
  },
};

/** Calls the admin API; answers the parsed JSON (or text), throws `ApiError`. `ifMatch`: an ETag the change is based on (412 when stale); `ifNoneMatch: "*"`: create only (412 when it exists). */
export async function call(method, path, body, options = {}) {
  return (await exchange(method, path, body, options)).value;
}

/** GET `path`: `{ value, etag }`, the ETag header as sent (`"…"`, quotes included), null without one. */
export async function getWithETag(path, options = {}) {
  const { value, response } = await exchange("GET", path, undefined, options);
  return { value, etag: response.headers.get("ETag") };
}

async function exchange(method, path, body, { token = session.token, signal, ifMatch, ifNoneMatch } = {}) {
  const headers = { Authorization: "Bearer " + (token ?? "") };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (ifMatch) headers["If-Match"] = ifMatch;
  if (ifNoneMatch) headers["If-None-Match"] = ifNoneMatch;
  let response;
  try {
    response = await fetch(path, {
      method, headers, signal, cache: "no-store",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, "unreachable", "the hub did not answer (" + error.message + ")");
  }
  const text = await response.text();
  let value = text;
  if ((response.headers.get("Content-Type") ?? "").startsWith("application/json")) {
    try { value = JSON.parse(text); } catch {}
  }
  if (!response.ok) {
    const error = value && typeof value === "object" ? value.error : undefined;
    // A token revoked (or a hub restarted with another root token) while the page is open.
    if (response.status === 401) window.dispatchEvent(new CustomEvent("pushhub:unauthorized"));
    const flat = typeof error === "string"; // {"error":"stale_definition","message":…}
    const code = flat ? error : error?.code;
    const message = flat ? value.message : error?.message;
    const problems = (flat ? value.problems : error?.problems ?? value?.problems) ?? [];
    throw new ApiError(response.status, code ?? "http_" + response.status, message ?? String(text).trim(), Array.isArray(problems) ? problems : []);
  }
  return { value, response };
}

export const get = (path, options) => call("GET", path, undefined, options);

/** A path with query parameters; empty values are left out. */
export function withQuery(path, parameters) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (one !== undefined && one !== null && String(one) !== "") query.append(name, String(one));
    }
  }
  const text = query.toString();
  return text ? path + "?" + text : path;
}

/** `/v1/screens/{name}` etc.: a screen name keeps its slashes, other characters are encoded. */
export const screenPath = (name) => "/v1/screens/" + name.split("/").map(encodeURIComponent).join("/");

/** Parses Prometheus text exposition into name → value (unlabelled samples only: all the hub has). */
export function parseMetrics(text) {
  const values = {};
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const [name, value] = line.split(" ");
    values[name] = Number(value);
  }
  return values;
}
