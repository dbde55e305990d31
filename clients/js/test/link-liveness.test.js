// The dead-link rule (docs/protocol.md "Heartbeats"), as ClientSessionTests checks the Swift one.

import { test } from "node:test";
import assert from "node:assert/strict";
import { LinkLiveness } from "../src/link-liveness.js";

test("the link is dead after 2 × heartbeat_s + 2 s without any message, counted from the last one", () => {
  const liveness = new LinkLiveness();
  assert.equal(liveness.deadline, undefined);
  liveness.connecting(0);
  assert.equal(liveness.deadline, 52000); // 25 s until a welcome says otherwise
  assert.equal(liveness.isDead(51999), false);
  liveness.heard(1000);
  assert.equal(liveness.welcomed(1, true, 1000), true); // the hub's interval: re-arm
  assert.equal(liveness.limitMs, 4000);
  assert.equal(liveness.welcomed(1, true, 1500), false); // the same interval: the timer stands
  liveness.heard(3000);
  assert.deepEqual([liveness.isDead(5000), liveness.deadline], [false, 7000]);
  assert.deepEqual([liveness.isDead(7100), liveness.silenceMs(7100)], [true, 4100]);
  liveness.closed();
  liveness.heard(8000); // a late event of a closed socket
  assert.deepEqual([liveness.deadline, liveness.isDead(60000)], [undefined, false]);
  liveness.connecting(100000);
  assert.equal(liveness.deadline, 104000); // the last welcome's interval carries over
});

test("a hub that names no epoch (before heartbeats) leaves the link unwatched: its silence proves nothing", () => {
  const liveness = new LinkLiveness();
  liveness.connecting(0);
  assert.equal(liveness.welcomed(1, false, 500), true);
  liveness.heard(1000);
  assert.deepEqual([liveness.deadline, liveness.isDead(600000), liveness.heartbeatS], [undefined, false, 25]);
});

test("a heartbeat_s that is not a positive number keeps the interval", () => {
  const liveness = new LinkLiveness();
  liveness.connecting(0);
  for (const bad of [0, -1, NaN, Infinity, undefined, "5"]) assert.equal(liveness.welcomed(bad, true, 10), false, String(bad));
  assert.equal(liveness.limitMs, 52000);
});
