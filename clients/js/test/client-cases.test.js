// The shared client cases (Tests/ClientCases/cases.json, also run by the Swift and Java tests):
// RFC 8785 canonical forms and screen hashes, RFC 6902 patches. One test per case, named after it.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { canonicalize, deepFreeze } from "../src/canonical-json.js";
import { screenHash, TreeHasher } from "../src/screen-hash.js";
import { applyPatch, PatchError } from "../src/json-patch.js";

const text = readFileSync(new URL("../../../Tests/ClientCases/cases.json", import.meta.url), "utf8");
const cases = JSON.parse(text);
const pristine = JSON.parse(text); // untouched copies: a patch must not change the document it is given

/** JSON equality as the file means it: numbers by value (-0 equals 0), objects without member order. */
function sameJSON(a, b) {
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => sameJSON(x, b[i]));
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length &&
    keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && sameJSON(a[k], b[k]))
  );
}

test("the case file has the cases", () => {
  assert.ok(cases.canonical.length >= 60, `${cases.canonical.length} canonical cases`);
  assert.ok(cases.patch.length >= 50, `${cases.patch.length} patch cases`);
});

for (const c of cases.canonical) {
  test(`canonical: ${c.name}`, async () => {
    const tree = JSON.parse(c.input);
    assert.equal(canonicalize(tree), c.canonical, "canonical form");
    assert.equal(await screenHash(tree, { builtIn: true }), c.hash, "hash (built-in SHA-256)");
    assert.equal(await screenHash(tree), c.hash, "hash (SubtleCrypto where present)");
    // The client's path: a frozen tree, its containers' forms cached.
    const hashed = await new TreeHasher().hash(JSON.parse(c.input));
    assert.deepEqual(hashed, { hash: c.hash, canonical: c.canonical }, "TreeHasher");
  });
}

cases.patch.forEach((c, i) => {
  test(`patch: ${c.name}`, () => {
    // The client holds frozen trees: applying must copy, never write into the document.
    const doc = deepFreeze(c.doc);
    let result;
    try {
      result = applyPatch(doc, c.ops);
    } catch (error) {
      if (!(error instanceof PatchError)) throw error;
      if (!("error" in c)) assert.fail(`refused (${error.message}), expected ${canonicalize(c.expected)}`);
      return;
    } finally {
      assert.deepEqual(doc, pristine.patch[i].doc, "the document given to applyPatch changed");
    }
    if ("error" in c) assert.fail(`applied (${canonicalize(result)}), expected an error: ${c.error}`);
    assert.ok(sameJSON(result, c.expected), `got ${canonicalize(result)}, expected ${canonicalize(c.expected)}`);
  });
});
