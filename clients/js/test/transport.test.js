// The link to the hub with a fake WebSocket and node's mock timers: dead links, reconnects,
// sockets of older generations.

import { test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_BACKOFF } from "../src/reconnect-schedule.js";
import { Transport } from "../src/transport.js";

class FakeSocket {
  constructor(url, protocol) {
    FakeSocket.made.push(this);
    Object.assign(this, { url, protocol, readyState: 0, sent: [], closedWith: null });
  }
  send(text) { this.sent.push(text); }
  close(code) { this.closedWith = code ?? "no code"; }
  opened() { this.readyState = 1; this.onopen(); }
}

/** A transport on a fake clock (advanced with the mock timers), and what its client was told. */
function link(t, random = 0.5) {
  t.mock.timers.enable(["setTimeout"]); // the array form: node 18.19 and 20
  FakeSocket.made = [];
  let now = 0;
  const told = [];
  const stats = { connects: 0, deadLinks: 0 };
  const client = {
    reconnect: () => told.push(["reconnect"]),
    opened: () => told.push(["opened"]),
    received: (data, generation) => told.push(["received", data, generation]),
    dropped: (code, reason) => told.push(["dropped", code, reason]),
    connectFailed: (error) => told.push(["connectFailed", String(error)]),
  };
  const transport = new Transport(
    { url: "ws://hub/v1/connect", WebSocket: FakeSocket, now: () => now, random: () => random, backoff: DEFAULT_BACKOFF, stats },
    client);
  const advance = (ms) => {
    now += ms;
    t.mock.timers.tick(ms);
  };
  return { transport, told, stats, advance };
}

test("a socket silent for 2 × heartbeat_s + 2 s is given up at once, and the client told once", (t) => {
  const { transport, told, stats, advance } = link(t);
  transport.connect(transport.begin());
  const [socket] = FakeSocket.made;
  assert.deepEqual([socket.protocol, stats.connects], ["pushhub.v1", 1]);
  socket.opened();
  transport.welcomed(1, true); // the hub's heartbeat_s: 1 s, so 4 s of silence
  advance(1000);
  socket.onmessage({ data: '{"type":"heartbeat"}' });
  advance(3999);
  assert.deepEqual(told.map(([what]) => what), ["opened", "received"]);
  advance(1);
  assert.deepEqual(told.at(-1), ["dropped", 1006, "nothing from the hub for 4.0 s (heartbeat every 1 s): the link is dead"]);
  assert.deepEqual([stats.deadLinks, socket.closedWith, socket.onmessage, transport.socket], [1, "no code", null, null]);
  advance(600000);
  assert.equal(told.length, 3); // nothing more: no timer left for the old socket
});

test("a hub that sends no heartbeats is not watched", (t) => {
  const { transport, told, advance } = link(t);
  transport.connect(transport.begin());
  FakeSocket.made[0].opened();
  transport.welcomed(25, false);
  advance(600000);
  assert.deepEqual(told, [["opened"]]);
});

test("after a drop the link opens again after the schedule's delay, which a welcome starts over", (t) => {
  const { transport, told, advance } = link(t);
  transport.connect(transport.begin());
  FakeSocket.made[0].onclose({ code: 1006, reason: "" });
  assert.deepEqual(told, [["dropped", 1006, ""]]);
  assert.deepEqual(transport.reconnectLater(1006), { delayMs: 250, attempt: 1 });
  advance(249);
  assert.equal(told.length, 1);
  advance(1);
  assert.deepEqual(told.at(-1), ["reconnect"]);
  assert.deepEqual(transport.reconnectLater(1006), { delayMs: 500, attempt: 2 });
  transport.reconnectNow();
  transport.welcomed(25, true);
  assert.deepEqual(transport.reconnectLater(1006), { delayMs: 250, attempt: 1 });
});

test("events of an older socket are ignored, and so is its generation", (t) => {
  const { transport, told } = link(t);
  const first = transport.begin();
  transport.connect(first);
  const [old] = FakeSocket.made;
  old.onclose({ code: 1001, reason: "restart" });
  const second = transport.begin();
  transport.connect(second);
  old.onmessage({ data: "late" });
  old.onclose({ code: 1006, reason: "" });
  FakeSocket.made[1].onmessage({ data: "new" });
  assert.deepEqual(told, [["dropped", 1001, "restart"], ["received", "new", second]]);
  assert.deepEqual([transport.isCurrent(first), transport.isCurrent(second)], [false, true]);
});

test("a WebSocket constructor that throws is a failed connect and a drop (1006)", () => {
  const told = [];
  const refusing = function () { throw new Error("blocked"); };
  const stats = { connects: 0, deadLinks: 0 };
  const transport = new Transport({ url: "ws://x", WebSocket: refusing, now: () => 0, random: () => 0.5, backoff: DEFAULT_BACKOFF, stats }, {
    connectFailed: (error) => told.push(["connectFailed", String(error)]),
    dropped: (code, reason) => told.push(["dropped", code, reason]),
  });
  transport.connect(transport.begin());
  assert.deepEqual(told, [["connectFailed", "Error: blocked"], ["dropped", 1006, "Error: blocked"]]);
  assert.equal(stats.connects, 1);
});

test("stop() closes the socket with 1000 and nothing opens or fires after it", (t) => {
  const { transport, told, advance } = link(t);
  transport.connect(transport.begin());
  const [socket] = FakeSocket.made;
  socket.opened();
  transport.reconnectLater(1006);
  transport.stop();
  assert.deepEqual([socket.closedWith, transport.send({ type: "ack" }), transport.isCurrent(transport.generation)], [1000, false, false]);
  socket.onclose({ code: 1000, reason: "" });
  advance(600000);
  transport.reconnectNow();
  assert.deepEqual(told, [["opened"]]);
});
