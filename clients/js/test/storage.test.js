// Storage keys and forms (docs/clients.md "Storage"): the same as the Swift client's.

import { test } from "node:test";
import assert from "node:assert/strict";
import { canonicalize } from "../src/canonical-json.js";
import { readScopeRecord, recordKey, scopeRecord, screenKey, storageScope, storedScreen, tokenSubject, MemoryStorage } from "../src/storage.js";
import { hashOf, jwt } from "./helpers.js";

test("a token's sub names the scope; user ids are escaped so no two users' keys meet", () => {
  assert.equal(tokenSubject(jwt("u/ü:1")), "u/ü:1");
  assert.equal(recordKey(storageScope(jwt("a:screen"))), "user:a%3Ascreen:epoch");
  assert.equal(storageScope("not-a-jwt", "d"), "user:");
  assert.equal(storageScope(undefined, "d-1"), "device:d-1");
  assert.equal(screenKey(storageScope(jwt("alice")), "home"), "user:alice:screen:home");
  assert.equal(tokenSubject("a." + Buffer.from('{"sub":1}').toString("base64url") + ".c"), null);
});

test("the stored form is the canonical {epoch, hash, tree, version} (the Swift client's too)", () => {
  const tree = { b: [1, "\u2028"], a: { "é": -0 } };
  const text = storedScreen("e-1", hashOf(tree), canonicalize(tree), 12);
  assert.equal(text, canonicalize({ epoch: "e-1", hash: hashOf(tree), tree, version: 12 }));
  assert.ok(storedScreen(undefined, "h", "{}", 1).startsWith('{"hash":'));
  assert.equal(scopeRecord("e-1", 7), '{"epoch":"e-1","last_sync":7}');
  assert.equal(scopeRecord("e-1", undefined), '{"epoch":"e-1"}');
});

test("a scope's record reads back, and anything unreadable reads as a fresh start", async () => {
  const storage = new MemoryStorage();
  storage.setItem("k", scopeRecord("e-1", 7));
  assert.deepEqual(await readScopeRecord(storage, "k"), { epoch: "e-1", lastSync: 7 });
  storage.setItem("k", "garbage");
  assert.deepEqual(await readScopeRecord(storage, "k"), { epoch: undefined, lastSync: undefined });
  storage.setItem("k", '{"epoch":"e-1","last_sync":1.5}');
  assert.deepEqual(await readScopeRecord(storage, "k"), { epoch: "e-1", lastSync: undefined });
});
