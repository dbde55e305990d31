// The client's protocol rules, fed message by message (no hub, no socket, no timer): the cases of
// Tests/PushHubClientTests/ClientSessionTests.swift, and the JavaScript client's own.

import { test } from "node:test";
import assert from "node:assert/strict";
import { ClientSession } from "../src/client-session.js";
import { delivered, emitted, hashOf, jwt, sent, settle, stored, stores } from "./helpers.js";
import { storageScope } from "../src/storage.js";

const DEVICE = "device:d-1";
const WELCOME = { type: "welcome", session: "s-1", user: null, heartbeat_s: 25, sync_seq: 7, epoch: "e-1" };

/** A session of device d-1 whose storage holds `storage`, welcomed (epoch e-1, sync_seq 7), following `screens`. */
function welcomed(screens = [], storage = new Map()) {
  const session = new ClientSession();
  settle(session, session.enter(DEVICE, { epoch: undefined, lastSync: undefined }), storage);
  for (const screen of screens) settle(session, session.subscribe(screen), storage);
  settle(session, session.receive(WELCOME), storage);
  return session;
}

function snapshot(tree, version, screen = "home") {
  return { type: "snapshot", screen, version, hash: hashOf(tree), tree };
}

function patch(from, version, hash, ops, screen = "home") {
  return { type: "patch", screen, from, version, hash, ops };
}

test("a welcome subscribes each screen, with have when a tree is held; the hello carries app, epoch and last_sync", () => {
  const session = new ClientSession({ app: { platform: "ios", version: "5.3.0" } });
  const tree = { title: "Hi" };
  const storage = new Map([[DEVICE + ":screen:home", stored(tree, 3, "e-1")]]);
  settle(session, session.enter(DEVICE, { epoch: "e-1", lastSync: 4 }), storage);
  const cached = settle(session, session.subscribe("home"), storage);
  assert.deepEqual(delivered(cached), [["home", "cache", 3]]);
  settle(session, session.subscribe("menu"), storage);
  assert.deepEqual(sent(session.opened({ token: "t", device: undefined })), [
    '{"type":"hello","protocol":1,"heartbeat":true,"token":"t","app":{"platform":"ios","version":"5.3.0"},"epoch":"e-1","last_sync":4}',
  ]);
  const actions = settle(session, session.receive({ ...WELCOME, sync_seq: 9 }), storage);
  assert.deepEqual(sent(actions), [
    `{"type":"subscribe","screen":"home","have":{"version":3,"hash":"${hashOf(tree)}"}}`,
    '{"type":"subscribe","screen":"menu"}',
  ]);
  const live = actions.find((a) => a.type === "goLive");
  assert.deepEqual([live.heartbeatS, live.hubSendsHeartbeats, session.welcome.epoch], [25, true, "e-1"]);
});

test("a screen whose stored tree is still being read is subscribed once it was read, with have", () => {
  const tree = { title: "Hi" };
  const session = new ClientSession();
  settle(session, session.enter(DEVICE, { epoch: "e-1", lastSync: undefined }));
  const [load] = session.subscribe("home"); // its read has not returned yet
  assert.equal(load.type, "load");
  assert.deepEqual(sent(session.receive(WELCOME)), []);
  const actions = settle(session, session.loaded(load.load, stored(tree, 3, "e-1")));
  assert.deepEqual(delivered(actions), [["home", "cache", 3]]);
  assert.deepEqual(sent(actions), [`{"type":"subscribe","screen":"home","have":{"version":3,"hash":"${hashOf(tree)}"}}`]);
});

test("a patch from a version the client does not hold resubscribes without have, and later patches wait for the snapshot", () => {
  const session = welcomed(["home"]);
  settle(session, session.receive(snapshot({ a: 1 }, 1)));
  const v3 = { a: 3 };
  const actions = settle(session, session.receive(patch(2, 3, hashOf(v3), [{ op: "replace", path: "/a", value: 3 }])));
  assert.deepEqual(emitted(actions), [["resubscribe", { screen: "home", reason: "unexpected_from", held: 1, from: 2, version: 3 }]]);
  assert.deepEqual(sent(actions), ['{"type":"subscribe","screen":"home"}']);
  // A patch already in flight is ignored until the snapshot arrives.
  assert.deepEqual(session.receive(patch(3, 4, "x", [])), []);
  const accepted = settle(session, session.receive(snapshot(v3, 3)));
  assert.deepEqual(delivered(accepted), [["home", "snapshot", 3]]);
  assert.equal(session.screens.get("home").resyncing, false);
});

test("a patch whose result does not hash to the hub's hash is a mismatch and a resubscribe", () => {
  const session = welcomed(["home"]);
  settle(session, session.receive(snapshot({ a: 1 }, 1)));
  const actions = settle(session, session.receive(patch(1, 2, "0000", [{ op: "replace", path: "/a", value: 2 }])));
  assert.deepEqual(emitted(actions), [
    ["mismatch", { screen: "home", version: 2, expected: "0000", actual: hashOf({ a: 2 }), source: "patch" }],
    ["resubscribe", { screen: "home", reason: "hash_mismatch", held: 1, from: 1, version: 2 }],
  ]);
  assert.deepEqual(sent(actions), ['{"type":"subscribe","screen":"home"}']);
  assert.equal(session.screens.get("home").version, undefined);
  assert.deepEqual(session.screens.get("home").tree, { a: 1 }); // kept for the app until the snapshot
});

test("a patch applies copy-on-write, is stored in canonical form and delivered; one that cannot apply resubscribes", () => {
  const session = welcomed(["home"]);
  const v1 = { list: [{ id: "a" }, { id: "b" }], title: "x" };
  settle(session, session.receive(snapshot(v1, 1)));
  const v2 = { list: [{ id: "a" }, { id: "b" }], title: "y" };
  const actions = settle(session, session.receive(patch(1, 2, hashOf(v2), [{ op: "replace", path: "/title", value: "y" }])));
  assert.deepEqual(delivered(actions), [["home", "patch", 2]]);
  assert.deepEqual(stores(actions), [[DEVICE + ":screen:home", stored(v2, 2, "e-1")]]);
  assert.equal(session.screens.get("home").tree.list, v1.list); // the unchanged subtree is shared
  const failed = settle(session, session.receive(patch(2, 3, "x", [{ op: "remove", path: "/nope" }])));
  const [[, event]] = emitted(failed);
  assert.equal(event.reason, "patch_failed");
  assert.match(event.detail, /nope/);
});

test("a snapshot that does not hash to its hash is kept (the hub is the authority), with a mismatch event", () => {
  const session = welcomed(["home"]);
  const tree = { a: 1 };
  const actions = settle(session, session.receive({ ...snapshot(tree, 1), hash: "f00d" }));
  assert.deepEqual(emitted(actions), [["mismatch", { screen: "home", version: 1, expected: "f00d", actual: hashOf(tree), source: "snapshot" }]]);
  assert.deepEqual(delivered(actions), [["home", "snapshot", 1]]);
  assert.equal(session.screens.get("home").hash, "f00d"); // what `have` will say
  assert.deepEqual(sent(actions), []);
});

test("unchanged confirms the held tree without writing it again; with no tree held it resubscribes", () => {
  const tree = { title: "Hi" };
  const storage = new Map([[DEVICE + ":screen:home", stored(tree, 3, "e-1")]]);
  const session = new ClientSession();
  settle(session, session.enter(DEVICE, { epoch: "e-1", lastSync: undefined }), storage);
  settle(session, session.subscribe("home"), storage);
  settle(session, session.receive(WELCOME), storage);
  const actions = session.receive({ type: "unchanged", screen: "home", version: 3, hash: hashOf(tree) });
  assert.deepEqual(delivered(actions), [["home", "unchanged", 3]]);
  assert.deepEqual(stores(actions), []);
  assert.equal(session.stats.unchanged, 1);
  const fresh = welcomed(["menu"]);
  const resubscribed = fresh.receive({ type: "unchanged", screen: "menu", version: 1, hash: "x" });
  assert.equal(emitted(resubscribed)[0][1].reason, "no_tree");
});

test("syncs are deduped by id, and last_sync stays below a sync until the app has handled it", () => {
  const session = welcomed();
  assert.equal(session.lastSync, 7);
  const sync = { type: "sync", id: "s-9", seq: 9, reason: "hotfix", scope: "bundle", jitter_ms: 100 };
  const first = session.receive(sync);
  const scheduled = first.filter((a) => a.type === "schedule");
  assert.deepEqual(scheduled.map((a) => a.sync), [
    { id: "s-9", seq: 9, reason: "hotfix", scope: "bundle", hint: undefined, mandatory: false, jitterMs: 100 },
  ]);
  assert.equal(session.lastSync, 8); // below s-9, which waits for its jitter
  assert.deepEqual(session.receive(sync), []);
  assert.equal(session.stats.duplicateSyncs, 1);
  const [tenth] = session.receive({ type: "sync", id: "s-10", seq: 10, reason: "r", scope: "s", jitter_ms: 0 })
    .filter((a) => a.type === "schedule");
  const handled = session.syncHandled(tenth.waiting);
  assert.equal(session.lastSync, 8); // s-9 still waits for its jitter
  assert.deepEqual(sent(handled), ['{"type":"ack","sync":"s-10"}']);
  session.syncHandled(scheduled[0].waiting);
  assert.equal(session.lastSync, 10);
  assert.deepEqual(session.syncHandled(scheduled[0].waiting), []); // handled once
});

test("a welcome from another hub state drops what storage held: no have, a fresh last_sync, sync ids forgotten", () => {
  const tree = { title: "Hi" };
  const storage = new Map([[DEVICE + ":screen:home", stored(tree, 3, "e-old")]]);
  const session = new ClientSession();
  settle(session, session.enter(DEVICE, { epoch: "e-old", lastSync: 40 }), storage);
  assert.deepEqual(delivered(settle(session, session.subscribe("home"), storage)), [["home", "cache", 3]]);
  const [old] = session.receive({ type: "sync", id: "s-1", seq: 41, reason: "r", scope: "s", jitter_ms: 0 })
    .filter((a) => a.type === "schedule");
  const [hello] = sent(session.opened({ device: "d-1" }));
  assert.match(hello, /"epoch":"e-old","last_sync":40/);
  const actions = session.receive({ ...WELCOME, sync_seq: 2, epoch: "e-new" });
  assert.deepEqual(sent(actions), ['{"type":"subscribe","screen":"home"}']);
  assert.deepEqual(stores(actions), [[DEVICE + ":screen:home", null], [DEVICE + ":epoch", '{"epoch":"e-new","last_sync":2}']]);
  assert.equal(session.screens.get("home").tree, undefined);
  assert.deepEqual([session.epoch, session.stats.epochChanges], ["e-new", 1]);
  // The new state numbers its syncs from 1 again: s-1 is a new sync here, handed over.
  const replayed = session.receive({ type: "sync", id: "s-1", seq: 1, reason: "r", scope: "s", jitter_ms: 0 });
  assert.equal(session.stats.duplicateSyncs, 0);
  // last_sync drops below s-1 while it waits for the app: a restart meanwhile gets it again.
  assert.deepEqual(stores(replayed), [[DEVICE + ":epoch", '{"epoch":"e-new","last_sync":0}']]);
  const [fresh] = replayed.filter((a) => a.type === "schedule");
  // The old state's s-1 (still waiting when the epoch changed) is handed over but never acked here.
  assert.deepEqual(session.syncHandled(old.waiting), []);
  assert.deepEqual(sent(session.syncHandled(fresh.waiting)), ['{"type":"ack","sync":"s-1"}']);
});

test("a stored tree of another epoch, or of none, is neither delivered nor sent as have, and is removed", () => {
  const tree = { title: "Hi" };
  const storage = new Map([
    [DEVICE + ":screen:home", stored(tree, 3, "e-0")],
    [DEVICE + ":screen:menu", stored(tree, 3, undefined)], // fetched before any session
    [DEVICE + ":screen:bad", '{"epoch":"e-1","hash":"00","tree":{},"version":1}'],
    [DEVICE + ":screen:junk", "not json"],
  ]);
  const session = new ClientSession();
  settle(session, session.enter(DEVICE, { epoch: "e-1", lastSync: undefined }), storage);
  for (const screen of ["home", "menu", "bad", "junk"]) {
    const actions = settle(session, session.subscribe(screen), storage);
    assert.deepEqual([delivered(actions), stores(actions)], [[], [[DEVICE + ":screen:" + screen, null]]], screen);
  }
  // A first session ever (no epoch stored): the welcome's epoch is adopted and recorded.
  const fresh = new ClientSession();
  settle(fresh, fresh.enter(DEVICE, { epoch: undefined, lastSync: undefined }));
  const actions = settle(fresh, fresh.receive({ ...WELCOME, sync_seq: 5, epoch: "e-9" }));
  assert.deepEqual(stores(actions), [[DEVICE + ":epoch", '{"epoch":"e-9","last_sync":5}']]);
  assert.equal(fresh.stats.epochChanges, 0);
});

test("another user's scope: what was held is forgotten, the new user's stored tree delivered", () => {
  const alice = storageScope(jwt("alice"));
  const bob = storageScope(jwt("bob"));
  const aliceTree = { who: "alice" };
  const bobTree = { who: "bob" };
  const storage = new Map([
    [alice + ":screen:home", stored(aliceTree, 2, "e-1")],
    [bob + ":screen:home", stored(bobTree, 2, "e-1")],
  ]);
  const session = new ClientSession();
  settle(session, session.enter(alice, { epoch: "e-1", lastSync: 3 }), storage);
  settle(session, session.subscribe("home"), storage);
  assert.deepEqual(session.screens.get("home").tree, aliceTree);
  const actions = settle(session, session.enter(bob, { epoch: "e-1", lastSync: 9 }), storage);
  assert.deepEqual(delivered(actions), [["home", "cache", 2]]);
  assert.deepEqual([session.screens.get("home").tree, session.lastSync], [bobTree, 9]);
  settle(session, session.enter(alice, { epoch: "e-1", lastSync: undefined }), new Map());
  assert.equal(session.screens.get("home").tree, undefined);
});

test("what was asked before a user switch (a read, a hash) changes nothing after it", () => {
  const alice = storageScope(jwt("alice"));
  const bob = storageScope(jwt("bob"));
  const session = new ClientSession();
  settle(session, session.enter(alice, { epoch: "e-1", lastSync: undefined }));
  const [load] = session.subscribe("home");
  settle(session, session.receive(WELCOME));
  settle(session, session.loaded(load.load, null));
  const [verify] = session.receive(snapshot({ who: "alice" }, 1));
  settle(session, session.enter(bob, { epoch: "e-1", lastSync: undefined })); // alice's snapshot still being hashed
  assert.deepEqual(session.verified(verify.verification, hashOf(verify.tree), "{}"), []);
  assert.deepEqual(session.loaded(load.load, stored({ who: "alice" }, 1, "e-1")), []);
  assert.equal(session.screens.get("home").tree, undefined);
});

test("pending keeps the subscription and drops what was held; the first publish's snapshot is delivered", () => {
  const session = welcomed(["promo"]);
  const actions = session.receive({ type: "pending", screen: "promo" });
  assert.deepEqual(actions, [{ type: "emit", event: "pending", detail: { screen: "promo" } }]);
  assert.deepEqual([session.screens.get("promo").pending, session.stats.pending], [true, 1]);
  const tree = { sale: true };
  assert.deepEqual(delivered(settle(session, session.receive(snapshot(tree, 1, "promo")))), [["promo", "snapshot", 1]]);
  assert.equal(session.screens.get("promo").pending, false);
  // A cached tree of a screen deleted meanwhile: pending drops it.
  const resumed = welcomed(["home"], new Map([[DEVICE + ":screen:home", stored(tree, 1, undefined)]]));
  assert.equal(resumed.screens.get("home").tree, undefined); // stored without an epoch: not shown
  const cached = new ClientSession();
  const storage = new Map([[DEVICE + ":screen:home", stored(tree, 1, "e-1")]]);
  settle(cached, cached.enter(DEVICE, { epoch: "e-1", lastSync: undefined }), storage);
  settle(cached, cached.subscribe("home"), storage);
  settle(cached, cached.receive(WELCOME), storage);
  const dropped = cached.receive({ type: "pending", screen: "home" });
  assert.deepEqual(stores(dropped), [[DEVICE + ":screen:home", null]]);
  assert.equal(cached.screens.get("home").tree, undefined);
});

test("heartbeats only prove the link alive; a hub naming no epoch is not watched", () => {
  const session = welcomed();
  assert.deepEqual(session.receive({ type: "heartbeat" }), []);
  const old = new ClientSession();
  settle(old, old.enter(DEVICE, { epoch: undefined, lastSync: undefined }));
  const live = old.receive({ type: "welcome", session: "s", user: null, heartbeat_s: 1, sync_seq: 0 }).find((a) => a.type === "goLive");
  assert.deepEqual([live.heartbeatS, live.hubSendsHeartbeats], [1, false]);
});

test("a rendered owed to one hub state is not sent to another", () => {
  const session = welcomed(["home"]);
  session.closed();
  assert.deepEqual(session.rendered("home", 3), []); // owed until the next welcome
  const other = session.receive({ ...WELCOME, session: "s-2", sync_seq: 0, epoch: "e-2" });
  assert.deepEqual(sent(other).filter((m) => m.includes('"rendered"')), []);
  const same = welcomed(["home"]);
  same.closed();
  same.rendered("home", 3);
  const again = same.receive({ ...WELCOME, session: "s-2" });
  assert.deepEqual(sent(again).filter((m) => m.includes('"rendered"')), ['{"type":"rendered","screen":"home","version":3}']);
});

test("an ack the closing socket could not take is sent after the next welcome", () => {
  const session = welcomed();
  const [scheduled] = session.receive({ type: "sync", id: "s-8", seq: 8, reason: "r", scope: "s", jitter_ms: 0 })
    .filter((a) => a.type === "schedule");
  const [ack] = session.syncHandled(scheduled.waiting).filter((a) => a.type === "send");
  session.unsent(ack.message); // the socket was closing
  session.closed();
  assert.deepEqual(sent(session.receive(WELCOME)), ['{"type":"ack","sync":"s-8"}']);
});

test("a refused subscribe ends that subscription and names its screen; unauthorized stops the reconnects", () => {
  const session = welcomed(["nope"]);
  const actions = session.receive({ type: "error", code: "unknown_screen", message: "no screen", ref: "subscribe" });
  assert.deepEqual(emitted(actions), [["error", { code: "unknown_screen", message: "no screen", ref: "subscribe", screen: "nope" }]]);
  assert.deepEqual(stores(actions), [[DEVICE + ":screen:nope", null]]);
  assert.equal(session.screens.has("nope"), false);
  assert.equal(actions.some((a) => a.type === "stopReconnecting"), false);
  const refused = session.receive({ type: "error", code: "unauthorized", message: "expired", ref: "hello" });
  assert.deepEqual(refused.filter((a) => a.type === "stopReconnecting").map((a) => a.error.code), ["unauthorized"]);
});

test("gone ends the subscription and removes its stored tree; an unsubscribe is sent only while live", () => {
  const session = welcomed(["home", "menu"]);
  const actions = session.receive({ type: "gone", screen: "home" });
  assert.deepEqual([stores(actions), emitted(actions)], [[[DEVICE + ":screen:home", null]], [["gone", { screen: "home" }]]]);
  assert.equal(session.screens.has("home"), false);
  assert.deepEqual(sent(session.unsubscribe("menu")), ['{"type":"unsubscribe","screen":"menu"}']);
  session.subscribe("menu");
  session.closed();
  assert.deepEqual(session.unsubscribe("menu"), []);
});

test("nothing is stored before a user's scope is known", () => {
  const session = new ClientSession();
  assert.deepEqual(session.subscribe("home"), []); // read once the scope is entered
  const actions = settle(session, session.receive(WELCOME));
  assert.deepEqual(stores(actions), []);
  assert.deepEqual(stores(session.receive({ type: "sync", id: "s-8", seq: 8, reason: "r", scope: "s" })), []);
});

test("a tree that could not be hashed: a stored one is dropped (the screen subscribed without it), a hub message is void", () => {
  const session = welcomed();
  settle(session, session.enter("device:d-2", { epoch: "e-1", lastSync: undefined }));
  const [load] = session.subscribe("home");
  const [verify] = session.loaded(load.load, stored({ a: 1 }, 1, "e-1"));
  const actions = session.verifyFailed(verify.verification);
  assert.deepEqual([stores(actions), sent(actions)], [[["device:d-2:screen:home", null]], ['{"type":"subscribe","screen":"home"}']]);
  const [snapshotVerify] = session.receive(snapshot({ a: 2 }, 2));
  assert.deepEqual(session.verifyFailed(snapshotVerify.verification), []);
  assert.deepEqual(session.verified(snapshotVerify.verification, hashOf({ a: 2 }), "{}"), []); // it stays void
});

/** The `[version, variants]` of each deliver action. */
function variantsDelivered(actions) {
  return actions.filter((a) => a.type === "deliver").map((a) => [a.meta.version, a.meta.variants]);
}

test("meta.variants: a snapshot's map (absent: {}), kept by a patch without one, replaced by a patch's, stored with the tree", () => {
  const session = welcomed(["home"]);
  const v1 = { title: "A" };
  const first = settle(session, session.receive({ ...snapshot(v1, 1), variants: { hero: "b" } }));
  assert.deepEqual(variantsDelivered(first), [[1, { hero: "b" }]]);
  assert.deepEqual(stores(first), [[DEVICE + ":screen:home", stored(v1, 1, "e-1").replace('"version"', '"variants":{"hero":"b"},"version"')]]);
  assert.ok(Object.isFrozen(session.screens.get("home").variants));
  const v2 = { title: "B" };
  const kept = settle(session, session.receive(patch(1, 2, hashOf(v2), [{ op: "replace", path: "/title", value: "B" }])));
  assert.deepEqual(variantsDelivered(kept), [[2, { hero: "b" }]]);
  const v3 = { title: "C" };
  const replaced = settle(session, session.receive({ ...patch(2, 3, hashOf(v3), [{ op: "replace", path: "/title", value: "C" }]), variants: {} }));
  assert.deepEqual(variantsDelivered(replaced), [[3, {}]]);
  assert.deepEqual(stores(replaced), [[DEVICE + ":screen:home", stored(v3, 3, "e-1")]]); // no variants member when none
  const none = settle(session, session.receive({ ...snapshot(v1, 4) }));
  assert.deepEqual(variantsDelivered(none), [[4, {}]]);
});

test("a change of variants alone (a patch with no ops) delivers the same tree again with the new map and stores it", () => {
  const session = welcomed(["home"]);
  const tree = { title: "A" };
  settle(session, session.receive({ ...snapshot(tree, 5), variants: { hero: "a" } }));
  const held = session.screens.get("home").tree;
  const actions = settle(session, session.receive({ ...patch(5, 5, hashOf(tree), []), variants: { hero: "a", cta: "red" } }));
  assert.deepEqual(variantsDelivered(actions), [[5, { hero: "a", cta: "red" }]]);
  assert.deepEqual(actions.find((a) => a.type === "deliver").tree, held);
  assert.equal(stores(actions).length, 1);
  assert.match(stores(actions)[0][1], /"variants":\{"cta":"red","hero":"a"\}/);
  // The same map again is no change: nothing delivered.
  const same = settle(session, session.receive({ ...patch(5, 5, hashOf(tree), []), variants: { cta: "red", hero: "a" } }));
  assert.deepEqual(variantsDelivered(same), []);
});

test("unchanged carries variants like a snapshot: a new map is delivered and stored, absent means {}; the cache delivers the stored map", () => {
  const tree = { title: "Hi" };
  const storage = new Map([[DEVICE + ":screen:home", storedWith(tree, 3, { hero: "b" })]]);
  const session = new ClientSession();
  settle(session, session.enter(DEVICE, { epoch: "e-1", lastSync: undefined }), storage);
  const cached = settle(session, session.subscribe("home"), storage);
  assert.deepEqual(variantsDelivered(cached), [[3, { hero: "b" }]]);
  settle(session, session.receive(WELCOME), storage);
  const same = session.receive({ type: "unchanged", screen: "home", version: 3, hash: hashOf(tree), variants: { hero: "b" } });
  assert.deepEqual([variantsDelivered(same), stores(same)], [[[3, { hero: "b" }]], []]); // delivered as confirmed; storage is current
  const moved = session.receive({ type: "unchanged", screen: "home", version: 3, hash: hashOf(tree), variants: { hero: "a" } });
  assert.deepEqual(variantsDelivered(moved), [[3, { hero: "a" }]]);
  assert.deepEqual(stores(moved), [[DEVICE + ":screen:home", storedWith(tree, 3, { hero: "a" })]]);
  const ended = session.receive({ type: "unchanged", screen: "home", version: 3, hash: hashOf(tree) });
  assert.deepEqual(variantsDelivered(ended), [[3, {}]]);
  assert.deepEqual(session.screens.get("home").variants, {});
});

/** A stored screen of epoch e-1 shaped by `variants`. */
function storedWith(tree, version, variants) {
  return stored(tree, version, "e-1").replace('"version"', `"variants":${JSON.stringify(variants)},"version"`);
}

test("track: sent at once while live; a bad event or value throws and sends nothing", () => {
  const session = welcomed();
  assert.deepEqual(sent(session.track("purchase", 12.5)), ['{"type":"track","event":"purchase","value":12.5}']);
  assert.deepEqual(sent(session.track("signup:done-1.x_y")), ['{"type":"track","event":"signup:done-1.x_y"}']);
  assert.deepEqual(sent(session.track("e".repeat(64), 0)), [`{"type":"track","event":"${"e".repeat(64)}","value":0}`]);
  for (const [event, value] of [["", 1], ["e".repeat(65), 1], ["has space", 1], ["é", 1], [7, 1], [undefined, 1],
    ["ok", NaN], ["ok", Infinity], ["ok", "12"], ["ok", null]]) {
    assert.throws(() => session.track(event, value), TypeError, JSON.stringify([event, value]));
  }
  assert.equal(session.stats.tracks, 3);
});

test("track while not live: queued, the oldest dropped beyond 100, sent after the next welcome (after rendered)", () => {
  const session = welcomed(["home"]);
  session.closed();
  session.rendered("home", 2);
  for (let i = 0; i < 103; i++) assert.deepEqual(session.track("e" + i, i), []);
  assert.equal(session.stats.tracksDropped, 3);
  const messages = sent(session.receive({ ...WELCOME, session: "s-2" }));
  const tracks = messages.filter((m) => m.includes('"track"'));
  assert.equal(tracks.length, 100);
  assert.deepEqual([tracks[0], tracks[99]], ['{"type":"track","event":"e3","value":3}', '{"type":"track","event":"e102","value":102}']);
  assert.ok(messages.indexOf('{"type":"rendered","screen":"home","version":2}') < messages.indexOf(tracks[0]));
  session.closed();
  assert.deepEqual(sent(session.receive({ ...WELCOME, session: "s-3" })).filter((m) => m.includes('"track"')), []); // sent once
});

test("a track the closing socket could not take goes after the next welcome; tracks queued for one user are not sent as another", () => {
  const session = welcomed();
  const [send] = session.track("purchase", 1);
  session.unsent(send.message);
  session.closed();
  assert.deepEqual(sent(session.receive(WELCOME)), ['{"type":"track","event":"purchase","value":1}']);
  const alice = storageScope(jwt("alice"));
  const signedIn = new ClientSession();
  signedIn.track("before-any-user"); // a user is not known yet: the first one's
  settle(signedIn, signedIn.enter(alice, { epoch: undefined, lastSync: undefined }));
  signedIn.track("alice-did");
  settle(signedIn, signedIn.enter(storageScope(jwt("bob")), { epoch: undefined, lastSync: undefined }));
  assert.deepEqual(sent(signedIn.receive(WELCOME)).filter((m) => m.includes('"track"')), []);
  const first = new ClientSession();
  first.track("before-any-user");
  settle(first, first.enter(alice, { epoch: undefined, lastSync: undefined }));
  assert.deepEqual(sent(first.receive(WELCOME)), ['{"type":"track","event":"before-any-user"}']);
});

test("once the client ended (closed for good) tracks are dropped and counted, the waiting ones too", () => {
  const session = welcomed();
  session.closed();
  session.track("waiting");
  session.end();
  assert.deepEqual(session.track("later", 1), []);
  assert.deepEqual([session.stats.tracks, session.stats.tracksDropped], [2, 2]);
  assert.deepEqual(sent(session.receive(WELCOME)).filter((m) => m.includes('"track"')), []);
});

// MARK: - render reports (DESIGN §15): render_error beside rendered

test("renderFailed while live sends render_error with the held tree's hash, the error's component and message", () => {
  const session = welcomed(["home"]);
  const tree = { title: "Hi" };
  settle(session, session.receive(snapshot(tree, 3)));
  const error = Object.assign(new Error("no image for slide 2"), { component: "Carousel" });
  assert.deepEqual(sent(session.renderFailed("home", 3, error)), [
    `{"type":"render_error","screen":"home","version":3,"hash":"${hashOf(tree)}","component":"Carousel","message":"no image for slide 2"}`,
  ]);
  // A version the client does not hold: no hash; a thrown non-Error: its string, no component.
  assert.deepEqual(sent(session.renderFailed("home", 2, "bad layout")), ['{"type":"render_error","screen":"home","version":2,"message":"bad layout"}']);
  assert.deepEqual(sent(session.renderFailed("home", 3, { message: "x", component: 7 }, "h")), [
    '{"type":"render_error","screen":"home","version":3,"hash":"h","message":"x"}',
  ]);
  assert.deepEqual(sent(session.renderFailed("home", 3, undefined, "h")), ['{"type":"render_error","screen":"home","version":3,"hash":"h","message":"undefined"}']);
  for (const [screen, version] of [[undefined, 3], ["home", 3.5], ["home", "3"]]) {
    assert.throws(() => session.renderFailed(screen, version, new Error("x")), TypeError);
  }
});

test("a render_error's message is cut to 1000 code points and its component to 200, never inside a surrogate pair", () => {
  const session = welcomed(["home"]);
  const [exact] = session.renderFailed("home", 1, new Error("m".repeat(1000)), "h");
  assert.equal(exact.message.message, "m".repeat(1000));
  const [long] = session.renderFailed("home", 1, Object.assign(new Error("m".repeat(5000)), { component: "C".repeat(300) }), "h");
  assert.deepEqual([long.message.message, long.message.component], ["m".repeat(1000), "C".repeat(200)]);
  // 999 letters and then emoji (two UTF-16 units each): the 1000th code point is the first emoji, whole.
  const [astral] = session.renderFailed("home", 1, new Error("a".repeat(999) + "😀".repeat(10)), "h");
  assert.equal(astral.message.message, "a".repeat(999) + "😀");
  assert.equal([...astral.message.message].length, 1000);
  // A lone surrogate (the hub's JSON reader refuses one) becomes U+FFFD; a pair stays.
  const [lone] = session.renderFailed("home", 1, Object.assign(new Error("a\ud800b😀\udc00"), { component: "X\udbff" }), "h");
  assert.deepEqual([lone.message.message, lone.message.component], ["a\ufffdb😀\ufffd", "X\ufffd"]);
  // A thrown value whose string form throws still gives a report.
  const [odd] = session.renderFailed("home", 1, { toString() { throw new Error("no"); } }, "h");
  assert.match(odd.message.message, /cannot be turned into a string/);
});

test("render reports made while not live: the latest per screen goes after the next welcome; another hub state gets none", () => {
  const session = welcomed(["home", "menu"]);
  session.closed();
  assert.deepEqual(session.rendered("home", 3), []);
  assert.deepEqual(session.renderFailed("home", 4, new Error("boom"), "h4"), []); // replaces the rendered of home
  assert.deepEqual(session.rendered("menu", 2), []);
  assert.deepEqual(sent(session.receive({ ...WELCOME, session: "s-2" })).filter((m) => m.includes('"render')), [
    '{"type":"render_error","screen":"home","version":4,"hash":"h4","message":"boom"}',
    '{"type":"rendered","screen":"menu","version":2}',
  ]);
  session.closed();
  session.renderFailed("home", 5, new Error("again"), "h5");
  session.rendered("home", 5); // drawn after all: the rendered replaces the error
  assert.deepEqual(sent(session.receive({ ...WELCOME, session: "s-3" })).filter((m) => m.includes('"render')), [
    '{"type":"rendered","screen":"home","version":5}',
  ]);
  session.closed();
  session.renderFailed("home", 6, new Error("lost"), "h6");
  const other = session.receive({ ...WELCOME, session: "s-4", epoch: "e-2" });
  assert.deepEqual(sent(other).filter((m) => m.includes('"render')), []);
});

test("a render_error the closing socket could not take is sent after the next welcome", () => {
  const session = welcomed(["home"]);
  const [report] = session.renderFailed("home", 3, new Error("boom"), "h");
  session.unsent(report.message); // the socket was closing
  session.closed();
  assert.deepEqual(sent(session.receive(WELCOME)).filter((m) => m.includes('"render')), [
    '{"type":"render_error","screen":"home","version":3,"hash":"h","message":"boom"}',
  ]);
});
