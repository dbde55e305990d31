// RFC 8785 (JCS) canonical JSON: the form the screen hash is computed over (DESIGN §4).

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
