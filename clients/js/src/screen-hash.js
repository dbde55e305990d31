// The screen hash (DESIGN §4): lowercase hex SHA-256 of a tree's RFC 8785 form.

import { canonicalize, deepFreeze } from "./canonical-json.js";
import { sha256Hex } from "./sha256.js";

/** The screen hash of DESIGN §4: lowercase hex SHA-256 of the tree's RFC 8785 form. */
export function screenHash(tree, options) {
  return sha256Hex(canonicalize(tree), options);
}

/**
 * Hashes the trees one client holds. Each tree it is given is frozen first, so the canonical form
 * of every container is kept (a WeakMap): a patched tree shares its unchanged subtrees with the
 * previous version, and only the containers on the patch's paths are written out again.
 *
 * Invariant: a cached form belongs to a frozen container, so it stays that container's form.
 */
export class TreeHasher {
  /** `builtIn`: the JavaScript SHA-256 even where SubtleCrypto exists (options.hash "built-in"). */
  constructor({ builtIn = false } = {}) {
    this._forms = new WeakMap(); // frozen container → its canonical form
    this._builtIn = builtIn;
  }

  /** The RFC 8785 form of a tree this hasher froze before (its unchanged subtrees' forms are reused). */
  canonical(tree) {
    return canonicalize(tree, this._forms);
  }

  /** Freezes `tree` and resolves to its screen hash with the canonical form it was computed over. */
  async hash(tree) {
    deepFreeze(tree);
    const canonical = this.canonical(tree);
    return { hash: await sha256Hex(canonical, { builtIn: this._builtIn }), canonical };
  }
}
