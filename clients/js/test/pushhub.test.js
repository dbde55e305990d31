// PushHub, the shell, over a fake WebSocket with a MemoryStorage: that it performs what the
// session decides, in order (hashing is asynchronous: SubtleCrypto).

import { test } from "node:test";
import assert from "node:assert/strict";
import { PushHub } from "../src/pushhub.js";
import { MemoryStorage } from "../src/storage.js";
import { hashOf, stored } from "./helpers.js";

class FakeSocket {
  constructor() {
    FakeSocket.made.push(this);
    Object.assign(this, { readyState: 0, sent: [] });
  }
  send(text) { this.sent.push(JSON.parse(text)); }
  close() {}
  fromHub(message) { this.onmessage({ data: JSON.stringify(message) }); }
}

/** Waits until `condition()` holds (10 s at most: a loaded machine), polling every 2 ms. */
async function until(condition, what) {
  const deadline = Date.now() + 10000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail("timed out waiting for " + what);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** A PushHub of device d-1 on a fake socket, opened and welcomed (epoch e-1); closed when test `t` ends. */
async function live(t, storage, options = {}) {
  FakeSocket.made = [];
  const hub = new PushHub({ url: "ws://hub/v1/connect", device: "d-1", WebSocket: FakeSocket, storage, storageKey: "t", ...options });
  t.after(() => hub.close()); // its timers would keep node running
  await until(() => FakeSocket.made.length === 1, "the socket");
  const [socket] = FakeSocket.made;
  socket.readyState = 1;
  socket.onopen();
  socket.fromHub({ type: "welcome", session: "s", user: null, heartbeat_s: 25, sync_seq: 0, epoch: "e-1" });
  await until(() => hub.state === "live", "the welcome");
  return { hub, socket };
}

test("a reload resumes from storage: the cached tree at once, then subscribe with have, confirmed unchanged and rendered", async (t) => {
  const tree = { title: "Hi" };
  const storage = new MemoryStorage();
  storage.setItem("t:device:d-1:epoch", '{"epoch":"e-1","last_sync":3}');
  storage.setItem("t:device:d-1:screen:home", stored(tree, 4, "e-1"));
  const { hub, socket } = await live(t, storage);
  const seen = [];
  hub.subscribe("home", (got, meta) => seen.push([got.title, meta.source]));
  await until(() => socket.sent.some((m) => m.type === "subscribe"), "the subscribe");
  assert.deepEqual(socket.sent[0], { type: "hello", protocol: 1, heartbeat: true, device: "d-1", epoch: "e-1", last_sync: 3 });
  assert.deepEqual(socket.sent[1], { type: "subscribe", screen: "home", have: { version: 4, hash: hashOf(tree) } });
  socket.fromHub({ type: "unchanged", screen: "home", version: 4, hash: hashOf(tree) });
  await until(() => socket.sent.some((m) => m.type === "rendered"), "rendered");
  assert.deepEqual(seen, [["Hi", "cache"], ["Hi", "unchanged"]]);
  assert.deepEqual(socket.sent.at(-1), { type: "rendered", screen: "home", version: 4 });
  hub.close();
  assert.deepEqual([hub.state, hub.session], ["closed", null]);
});

test("hub messages are handled in arrival order although hashing is asynchronous", async (t) => {
  const { hub, socket } = await live(t, new MemoryStorage(), { autoRendered: false });
  const versions = [];
  hub.subscribe("home", (tree, meta) => versions.push(meta.version));
  await until(() => socket.sent.some((m) => m.type === "subscribe"), "the subscribe");
  const v1 = { n: 1, big: "x".repeat(200000) }; // the patch arrives while this is still being hashed
  const v2 = { ...v1, n: 2 };
  socket.fromHub({ type: "snapshot", screen: "home", version: 1, hash: hashOf(v1), tree: v1 });
  socket.fromHub({ type: "patch", screen: "home", from: 1, version: 2, hash: hashOf(v2), ops: [{ op: "replace", path: "/n", value: 2 }] });
  await until(() => versions.length === 2, "both versions");
  assert.deepEqual([versions, hub.stats.resubscribes], [[1, 2], 0]);
});

test("a sync is handed over after its jitter, then acked; its duplicate is dropped", async (t) => {
  const { hub, socket } = await live(t, new MemoryStorage(), { random: () => 0.5 });
  const syncs = [];
  hub.onSync((sync) => syncs.push(sync));
  const sync = { type: "sync", id: "s-1", seq: 1, reason: "hotfix", scope: "bundle", jitter_ms: 40 };
  socket.fromHub(sync);
  socket.fromHub(sync);
  await until(() => socket.sent.some((m) => m.type === "ack"), "the ack");
  assert.deepEqual(syncs.map((s) => [s.id, s.delayMs, s.jitterMs]), [["s-1", 20, 40]]);
  assert.deepEqual([hub.stats.duplicateSyncs, hub.lastSync], [1, 1]);
});

test("onTree gets meta.variants (and the subscription has them); a change of variants alone calls onTree again", async (t) => {
  const { hub, socket } = await live(t, new MemoryStorage(), { autoRendered: false });
  const seen = [];
  const sub = hub.subscribe("home", (tree, meta) => seen.push([tree.title, meta.version, meta.variants]));
  await until(() => socket.sent.some((m) => m.type === "subscribe"), "the subscribe");
  const tree = { title: "Hi" };
  socket.fromHub({ type: "snapshot", screen: "home", version: 1, hash: hashOf(tree), tree, variants: { hero: "b" } });
  socket.fromHub({ type: "patch", screen: "home", from: 1, version: 1, hash: hashOf(tree), ops: [], variants: {} });
  await until(() => seen.length === 2, "two deliveries");
  assert.deepEqual(seen, [["Hi", 1, { hero: "b" }], ["Hi", 1, {}]]);
  assert.deepEqual(sub.variants, {});
  const late = [];
  hub.subscribe("home", (got, meta) => late.push(meta.variants)); // a second listener gets what is held
  await until(() => late.length === 1, "the held tree");
  assert.deepEqual(late, [{}]);
});

test("the components option is sent in every hello and with fetchScreen; a bad one throws before any socket is made", async (t) => {
  const asked = [];
  const tree = { title: "Hi" };
  const fetch = async (url) => {
    asked.push(new URL(url));
    return new Response(JSON.stringify({ name: "home", version: 1, hash: hashOf(tree), tree }), { status: 200 });
  };
  const { hub, socket } = await live(t, new MemoryStorage(), { app: { platform: "web", version: "2.0.0" }, components: { Carousel: 2, Text: 1 }, fetch });
  assert.deepEqual(socket.sent[0], {
    type: "hello", protocol: 1, heartbeat: true, device: "d-1", app: { platform: "web", version: "2.0.0" }, components: { Carousel: 2, Text: 1 },
  });
  socket.readyState = 3;
  socket.onclose({ code: 1006, reason: "" });
  await until(() => FakeSocket.made.length === 2, "the reconnect");
  const again = FakeSocket.made[1];
  again.readyState = 1;
  again.onopen();
  assert.deepEqual(again.sent[0].components, { Carousel: 2, Text: 1 });
  await hub.fetchScreen("home");
  assert.equal(asked[0].searchParams.get("components"), "Carousel:2,Text:1");  // the fetch is made as the same build
  FakeSocket.made = [];
  assert.throws(() => new PushHub({ url: "ws://hub/v1/connect", device: "d-1", WebSocket: FakeSocket, components: { Carousel: 0 } }),
    { name: "TypeError", message: /Carousel is 0, not an integer from 1 to 1000/ });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(FakeSocket.made.length, 0);
});

test("track sends while live and queues while reconnecting; the queue goes after the welcome", async (t) => {
  const { hub, socket } = await live(t, new MemoryStorage(), { random: () => 0 });
  hub.track("purchase", 9.5);
  assert.deepEqual(socket.sent.at(-1), { type: "track", event: "purchase", value: 9.5 });
  assert.throws(() => hub.track("no spaces"), TypeError);
  socket.readyState = 3;
  socket.onclose({ code: 1006, reason: "" });
  assert.equal(hub.state, "reconnecting");
  hub.track("signup");
  await until(() => FakeSocket.made.length === 2, "the reconnect");
  const again = FakeSocket.made[1];
  again.readyState = 1;
  again.onopen();
  assert.equal(again.sent.some((m) => m.type === "track"), false);
  again.fromHub({ type: "welcome", session: "s2", user: null, heartbeat_s: 25, sync_seq: 0, epoch: "e-1" });
  await until(() => again.sent.some((m) => m.type === "track"), "the queued track");
  assert.deepEqual(again.sent.filter((m) => m.type === "track"), [{ type: "track", event: "signup" }]);
});

test("an onTree that throws (or rejects) reports a render_error for that version and no rendered; the other callbacks still run", async (t) => {
  const { hub, socket } = await live(t, new MemoryStorage());
  const surfaced = [];
  hub._report = (error) => surfaced.push(error.message); // the console, in a browser
  const drawn = [];
  hub.subscribe("home", (tree, meta) => {
    if (meta.version === 1) throw Object.assign(new Error("no slides"), { component: "Carousel" });
    drawn.push(["throwing one", meta.version]);
  });
  hub.subscribe("home", (tree, meta) => drawn.push(["other", meta.version]));
  await until(() => socket.sent.some((m) => m.type === "subscribe"), "the subscribe");
  const v1 = { n: 1 };
  socket.fromHub({ type: "snapshot", screen: "home", version: 1, hash: hashOf(v1), tree: v1 });
  await until(() => socket.sent.some((m) => m.type === "render_error"), "the render_error");
  assert.deepEqual(socket.sent.filter((m) => m.type === "render_error" || m.type === "rendered"), [
    { type: "render_error", screen: "home", version: 1, hash: hashOf(v1), component: "Carousel", message: "no slides" },
  ]);
  assert.deepEqual([drawn, surfaced], [[["other", 1]], ["no slides"]]);
  // The next version draws: rendered, as usual.
  const v2 = { n: 2 };
  socket.fromHub({ type: "patch", screen: "home", from: 1, version: 2, hash: hashOf(v2), ops: [{ op: "replace", path: "/n", value: 2 }] });
  await until(() => socket.sent.some((m) => m.type === "rendered"), "rendered");
  assert.deepEqual(socket.sent.filter((m) => m.type === "rendered"), [{ type: "rendered", screen: "home", version: 2 }]);
  // A promise that rejects counts as a throw.
  hub.subscribe("menu", async () => { throw new Error("later"); });
  await until(() => socket.sent.filter((m) => m.type === "subscribe").length === 2, "the second subscribe");
  socket.fromHub({ type: "snapshot", screen: "menu", version: 7, hash: hashOf(v1), tree: v1 });
  await until(() => socket.sent.some((m) => m.type === "render_error" && m.screen === "menu"), "menu's render_error");
  assert.equal(socket.sent.some((m) => m.type === "rendered" && m.screen === "menu"), false);
  assert.deepEqual(socket.sent.find((m) => m.screen === "menu" && m.type === "render_error").message, "later");
});

test("renderFailed while reconnecting is sent after the welcome, with the held tree's hash", async (t) => {
  const { hub, socket } = await live(t, new MemoryStorage(), { autoRendered: false, random: () => 0 });
  const sub = hub.subscribe("home", () => {});
  await until(() => socket.sent.some((m) => m.type === "subscribe"), "the subscribe");
  const tree = { title: "Hi" };
  socket.fromHub({ type: "snapshot", screen: "home", version: 3, hash: hashOf(tree), tree });
  // Held once hashed (asynchronously: a loaded machine may count the snapshot well before).
  await until(() => sub.version === 3 && sub.hash === hashOf(tree), "the snapshot held");
  socket.readyState = 3;
  socket.onclose({ code: 1006, reason: "" });
  hub.renderFailed("home", 3, new Error("caught by the app"));
  await until(() => FakeSocket.made.length === 2, "the reconnect");
  const again = FakeSocket.made[1];
  again.readyState = 1;
  again.onopen();
  assert.equal(again.sent.some((m) => m.type === "render_error"), false);
  again.fromHub({ type: "welcome", session: "s2", user: null, heartbeat_s: 25, sync_seq: 0, epoch: "e-1" });
  await until(() => again.sent.some((m) => m.type === "render_error"), "the owed render_error");
  assert.deepEqual(again.sent.filter((m) => m.type === "render_error"), [
    { type: "render_error", screen: "home", version: 3, hash: hashOf(tree), message: "caught by the app" },
  ]);
  assert.throws(() => hub.renderFailed("home", "3", new Error("x")), TypeError);
});
