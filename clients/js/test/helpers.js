// What the unit tests share: the screen hash computed synchronously, and a shell that performs a
// ClientSession's `verify` and `load` actions at once (the real one, PushHub, awaits them).

import { canonicalize } from "../src/canonical-json.js";
import { sha256, utf8 } from "../src/sha256.js";
import { storedScreen } from "../src/storage.js";

/** The screen hash (DESIGN §4) with the built-in SHA-256. */
export function hashOf(tree) {
  return [...sha256(utf8(canonicalize(tree)))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A stored screen as PushHub writes it. */
export function stored(tree, version, epoch) {
  return storedScreen(epoch, hashOf(tree), canonicalize(tree), version);
}

/**
 * Performs the `verify` actions (hashing at once) and the `load` actions (reading `storage`, a Map
 * of keys relative to the storage prefix) among `actions`, and the ones their results ask for:
 * every action, in the order the shell meets them.
 */
export function settle(session, actions, storage = new Map()) {
  const out = [];
  for (const action of actions) {
    out.push(action);
    if (action.type === "verify") {
      const next = session.verified(action.verification, hashOf(action.tree), canonicalize(action.tree));
      out.push(...settle(session, next, storage));
    } else if (action.type === "load") {
      out.push(...settle(session, session.loaded(action.load, storage.get(action.key) ?? null), storage));
    }
  }
  return out;
}

/** The messages among `actions`, as the JSON text the shell sends. */
export function sent(actions) {
  return actions.filter((a) => a.type === "send").map((a) => JSON.stringify(a.message));
}

/** The `[key, value]` of each store action. */
export function stores(actions) {
  return actions.filter((a) => a.type === "store").map((a) => [a.key, a.value]);
}

/** The `[event, detail]` of each emit action. */
export function emitted(actions) {
  return actions.filter((a) => a.type === "emit").map((a) => [a.event, a.detail]);
}

/** The `[screen, source, version]` of each deliver action. */
export function delivered(actions) {
  return actions.filter((a) => a.type === "deliver").map((a) => [a.screen, a.meta.source, a.meta.version]);
}

/** A JWT whose payload names `sub` (unsigned: the client reads, the hub verifies). */
export function jwt(sub) {
  const payload = Buffer.from(JSON.stringify({ sub })).toString("base64url");
  return "eyJhbGciOiJIUzI1NiJ9." + payload + ".sig";
}
