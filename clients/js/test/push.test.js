// Push tokens and syncs from silent pushes (DESIGN §17): the payloads handlePush understands,
// the session's rules (the token after every welcome; one hand-over per sync id whichever way it
// came; a push never moves last_sync), and PushHub performing them. The cases of
// Tests/PushHubClientTests/ClientPushTests.swift and ClientPushTokenTests.swift.

import { test } from "node:test";
import assert from "node:assert/strict";
import { ClientSession } from "../src/client-session.js";
import { PushHub } from "../src/pushhub.js";
import { pushedSync } from "../src/pushed-sync.js";
import { MemoryStorage } from "../src/storage.js";
import { jwt, sent, settle, stores } from "./helpers.js";

const DEVICE = "device:d-1";
const WELCOME = { type: "welcome", session: "s-1", user: null, heartbeat_s: 25, sync_seq: 7, epoch: "e-1" };
const APNS = { provider: "apns", token: "0abcff00", topic: "com.example.app" };
const APNS_MESSAGE = '{"type":"push_token","provider":"apns","token":"0abcff00","topic":"com.example.app"}';

function sync(id, seq) {
  return { type: "sync", id, seq, reason: "r", scope: "bundle", jitter_ms: 0 };
}

/** A session of device d-1 (last_sync 7, having handled `handled`), welcomed in epoch e-1. */
function live({ token = null, handled = [] } = {}) {
  const session = new ClientSession();
  settle(session, session.enter(DEVICE, { epoch: "e-1", lastSync: 7, handled }));
  session.setPushToken(token);
  session.receive(WELCOME);
  return session;
}

const scheduled = (actions) => actions.filter((a) => a.type === "schedule").map((a) => a.sync.id);

test("the sync is found in APNs userInfo, an FCM data map's JSON string, a React Native wrapper's data, and nowhere else", () => {
  const apns = { aps: { "content-available": 1 }, pushhub: { type: "sync", id: "s-12", seq: 12, mandatory: true } };
  assert.equal(pushedSync(apns).id, "s-12");
  assert.equal(pushedSync({ pushhub: '{"type":"sync","id":"s-3","seq":3}' }).seq, 3);
  assert.equal(pushedSync({ messageId: "m", data: { pushhub: '{"type":"sync","id":"s-4"}' } }).id, "s-4");
  for (const other of [null, "x", { aps: { alert: "hi" } }, { pushhub: "{not json" }, { pushhub: '{"type":"sync"}' },
    { pushhub: { type: "other", id: "s-1" } }, { data: null }]) {
    assert.equal(pushedSync(other), null, JSON.stringify(other));
  }
});

test("the push token goes after every welcome, at once when set while live, and not again when unchanged", () => {
  const session = live({ token: APNS });
  assert.equal(sent(session.receive(WELCOME)).at(-1), APNS_MESSAGE);
  assert.deepEqual(session.setPushToken({ ...APNS }), []);
  const fcm = session.setPushToken({ provider: "fcm", token: "f-1" });
  assert.deepEqual(sent(fcm), ['{"type":"push_token","provider":"fcm","token":"f-1"}']);
  assert.deepEqual(stores(fcm), [["push_token", '{"type":"push_token","provider":"fcm","token":"f-1"}']]);
});

test("a token that is not one is a TypeError", () => {
  const session = live();
  for (const bad of [{ provider: "apns", token: "ab" }, { provider: "web", token: "x" }, { provider: "fcm", token: "" }, "tok"]) {
    assert.throws(() => session.setPushToken(bad), TypeError, JSON.stringify(bad));
  }
});

test("removing the token sends a null token now when live, else once after the next welcome", () => {
  const removal = '{"type":"push_token","token":null}';
  const online = live({ token: APNS });
  const removed = online.setPushToken(null);
  assert.deepEqual([sent(removed), stores(removed)], [[removal], [["push_token", null]]]);
  const offline = live({ token: APNS });
  offline.closed();
  assert.deepEqual(sent(offline.setPushToken(null)), []);
  assert.equal(sent(offline.receive(WELCOME)).at(-1), removal);
  offline.closed();
  assert.ok(!sent(offline.receive(WELCOME)).includes(removal));
  assert.deepEqual(sent(live().setPushToken(null)), []);
});

test("a pushed sync is handed over at once and acked, but last_sync moves only when the socket brings it", () => {
  const session = live();
  const pushed = session.pushed(sync("s-9", 9));
  assert.deepEqual(scheduled(pushed), ["s-9"]);
  assert.equal(pushed[0].sync.jitterMs, 0);
  const handled = session.syncHandled(pushed[0].waiting);
  assert.deepEqual(sent(handled), ['{"type":"ack","sync":"s-9"}']);
  assert.deepEqual(stores(handled), [[DEVICE + ":syncs", '["s-9"]']]);
  assert.equal(session.lastSync, 7); // s-8 may still come over the socket
  const replay = session.receive(sync("s-9", 9));
  assert.deepEqual([scheduled(replay), session.stats.duplicateSyncs, session.lastSync], [[], 1, 9]);
  assert.deepEqual(stores(replay), [[DEVICE + ":epoch", '{"epoch":"e-1","last_sync":9}']]);
});

test("a sync the socket brought first is not handed over again by its push", () => {
  const session = live();
  assert.deepEqual(scheduled(session.receive(sync("s-8", 8))), ["s-8"]);
  assert.deepEqual(session.pushed(sync("s-8", 8)), []);
  assert.deepEqual([session.stats.duplicateSyncs, session.stats.pushedSyncs], [1, 0]);
});

test("the socket's copy of a push still waiting for the app holds last_sync back until the app returns", () => {
  const session = live();
  const [{ waiting }] = session.pushed(sync("s-9", 9));
  session.receive(sync("s-9", 9));
  assert.equal(session.lastSync, 8);
  session.syncHandled(waiting);
  assert.equal(session.lastSync, 9);
});

test("handled ids are stored (the last 64) and a new session hands none of them over again", () => {
  const session = live();
  let stored;
  for (let seq = 10; seq < 80; seq++) {
    const [{ waiting }] = session.receive(sync(`s-${seq}`, seq)).filter((a) => a.type === "schedule");
    stored = stores(session.syncHandled(waiting)).find(([key]) => key === DEVICE + ":syncs")[1];
  }
  const ids = Array.from({ length: 64 }, (_, i) => `s-${i + 16}`);
  assert.equal(stored, JSON.stringify(ids));
  const restarted = live({ handled: ids });
  assert.deepEqual(restarted.pushed(sync("s-79", 79)), []);
  assert.deepEqual(scheduled(restarted.receive(sync("s-16", 16))), []);
  assert.deepEqual(scheduled(restarted.pushed(sync("s-15", 15))), ["s-15"]);
});

test("another hub state forgets the handled ids (its syncs are numbered anew)", () => {
  const session = live({ handled: ["s-1"] });
  const actions = session.receive({ ...WELCOME, epoch: "e-2", sync_seq: 0 });
  assert.ok(stores(actions).some(([key, value]) => key === DEVICE + ":syncs" && value === null));
  assert.deepEqual(scheduled(session.pushed(sync("s-1", 1))), ["s-1"]);
});

// MARK: - PushHub

class FakeSocket {
  constructor() {
    FakeSocket.made.push(this);
    Object.assign(this, { readyState: 0, sent: [], closed: null });
  }
  send(text) { this.sent.push(JSON.parse(text)); }
  close(code) { this.closed = code; }
  open() {
    this.readyState = 1;
    this.onopen();
    this.onmessage({ data: JSON.stringify({ ...WELCOME, sync_seq: 0 }) });
  }
}

async function until(condition, what) {
  const deadline = Date.now() + 10000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail("timed out waiting for " + what);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

test("a signed-in client without a device gets one for its push token, reconnects with it, and sends the token; a restart sends it again", async (t) => {
  FakeSocket.made = [];
  const storage = new MemoryStorage();
  const options = { url: "ws://hub/v1/connect", token: jwt("u42"), WebSocket: FakeSocket, storage, storageKey: "t" };
  const hub = new PushHub(options);
  t.after(() => hub.close());
  await until(() => FakeSocket.made.length === 1, "the socket");
  FakeSocket.made[0].open();
  await until(() => hub.state === "live", "the welcome");
  assert.equal(FakeSocket.made[0].sent[0].device, undefined);
  await hub.setPushToken(APNS);
  const device = storage.getItem("t:device");
  assert.match(device, /^d-/);
  assert.equal(FakeSocket.made[0].closed, 1000);
  await until(() => FakeSocket.made.length === 2, "the new socket");
  const second = FakeSocket.made[1];
  second.open();
  await until(() => second.sent.some((m) => m.type === "push_token"), "the token");
  assert.equal(second.sent[0].device, device);
  assert.equal(JSON.stringify(second.sent.at(-1)), APNS_MESSAGE);
  hub.close();

  FakeSocket.made = [];
  const again = new PushHub(options);
  t.after(() => again.close());
  await until(() => FakeSocket.made.length === 1, "the socket after a restart");
  FakeSocket.made[0].open();
  await until(() => FakeSocket.made[0].sent.some((m) => m.type === "push_token"), "the stored token");
  assert.equal(FakeSocket.made[0].sent[0].device, device);
  assert.equal(FakeSocket.made.length, 1);
});

test("handlePush resolves false for another push, and true once the handlers settled; a second copy is not handed over", async (t) => {
  FakeSocket.made = [];
  const hub = new PushHub({ url: "ws://hub/v1/connect", device: "d-1", WebSocket: FakeSocket, storage: new MemoryStorage() });
  t.after(() => hub.close());
  const handed = [];
  hub.onSync(async (s) => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    handed.push(s.id);
  });
  assert.equal(await hub.handlePush({ aps: { alert: "hello" } }), false);
  const message = { data: { pushhub: '{"type":"sync","id":"s-5","seq":5,"scope":"bundle"}' } };
  assert.equal(await hub.handlePush(message), true);
  assert.deepEqual(handed, ["s-5"]);
  assert.equal(await hub.handlePush(message), true);
  assert.deepEqual([handed, hub.stats.pushedSyncs, hub.stats.duplicateSyncs], [["s-5"], 1, 1]);
  await until(() => FakeSocket.made.length === 1, "the socket");
  FakeSocket.made[0].open();
  await until(() => FakeSocket.made[0].sent.some((m) => m.type === "ack" && m.sync === "s-5"), "the ack after the welcome");
});
