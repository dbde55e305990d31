// The reconnect schedule (docs/clients.md "Reconnect"), as ClientSessionTests checks the Swift one.

import { test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_BACKOFF, ReconnectSchedule } from "../src/reconnect-schedule.js";

test("reconnect delays double from 0.5 s to 30 s; a 1001 starts over and caps them at 4 s for a minute", () => {
  const schedule = new ReconnectSchedule(DEFAULT_BACKOFF);
  const next = (code, atMs) => schedule.dropped(code, atMs, 0.5); // half of each ceiling
  assert.deepEqual([...Array(8)].map(() => next(1006, 0)), [250, 500, 1000, 2000, 4000, 8000, 15000, 15000]);
  const restart = [next(1001, 1000), ...[...Array(5)].map(() => next(1006, 30000))];
  assert.deepEqual(restart, [250, 500, 1000, 2000, 2000, 2000]);
  assert.equal(schedule.attempt, 6);
  assert.equal(next(1006, 62000), 15000); // longer than a minute: an outage
  schedule.welcomed();
  assert.equal(next(1006, 70000), 250);
});

test("full jitter: a delay is the random fraction of the ceiling, never the ceiling itself", () => {
  const schedule = new ReconnectSchedule({ ...DEFAULT_BACKOFF, initialMs: 200, maxMs: 1000 });
  assert.deepEqual([0, 0.999999, 0.95].map((r) => schedule.dropped(1006, 0, r)), [0, 399, 760]);
});
