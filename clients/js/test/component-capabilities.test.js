// The `components` option (DESIGN §16): what the hello declares, and what is refused before it
// could reach the hub. The cases of Tests/PushHubClientTests/ComponentCapabilitiesTests.swift.

import { test } from "node:test";
import assert from "node:assert/strict";
import { checkedComponents, componentsQuery, MAX_COMPONENTS } from "../src/component-capabilities.js";
import { ClientSession } from "../src/client-session.js";
import { fetchScreen } from "../src/fetch-screen.js";
import { MemoryStorage } from "../src/storage.js";
import { hashOf, sent } from "./helpers.js";

test("the hello carries components as given, after app; {} declares none; without the option there is no member", () => {
  const session = new ClientSession({ app: { platform: "ios", version: "5.3.0" }, components: { Carousel: 2, "text.v-1_x": 1 } });
  assert.deepEqual(sent(session.opened({ token: "t" })), [
    '{"type":"hello","protocol":1,"heartbeat":true,"token":"t","app":{"platform":"ios","version":"5.3.0"},"components":{"Carousel":2,"text.v-1_x":1}}',
  ]);
  assert.deepEqual(sent(new ClientSession({ components: {} }).opened({ device: "d-1" })), [
    '{"type":"hello","protocol":1,"heartbeat":true,"device":"d-1","components":{}}',
  ]);
  assert.deepEqual(sent(new ClientSession({}).opened({ device: "d-1" })), ['{"type":"hello","protocol":1,"heartbeat":true,"device":"d-1"}']);
});

test("the hello keeps the list as it was when the client was made: a later change of the app's object is not sent", () => {
  const mine = { Carousel: 2 };
  const session = new ClientSession({ components: mine });
  mine.Carousel = 9;
  mine.Extra = 1;
  assert.deepEqual(JSON.parse(sent(session.opened({ device: "d-1" }))[0]).components, { Carousel: 2 });
  assert.ok(Object.isFrozen(checkedComponents(mine)));
});

test("the edges: versions 1 and 1000, names of 1 and 100 characters, 1000 names", () => {
  const edges = { A: 1, ["x".repeat(100)]: 1000 };
  assert.deepEqual(checkedComponents(edges), edges);
  const many = Object.fromEntries(Array.from({ length: MAX_COMPONENTS }, (_, i) => ["C" + i, 1]));
  assert.equal(Object.keys(checkedComponents(many)).length, 1000);
  assert.equal(checkedComponents(undefined), undefined);
  assert.deepEqual(checkedComponents(Object.assign(Object.create(null), { Text: 1 })), { Text: 1 });
});

test("a bad list is a TypeError that names what is wrong, thrown by the session's constructor", () => {
  const cases = [
    [null, "got null"], [[["Carousel", 2]], "an array"], ["Carousel:2", "got string"], [new Map([["Carousel", 2]]), "got a Map"],
    [{ Carousel: 0 }, "Carousel is 0"], [{ Carousel: 1001 }, "Carousel is 1001"], [{ Carousel: 1.5 }, "Carousel is 1.5"],
    [{ Carousel: "2" }, 'Carousel is "2"'], [{ Carousel: NaN }, "Carousel is NaN"], [{ Carousel: null }, "Carousel is null"],
    [{ "": 1 }, '"" is not a component name'], [{ "has space": 1 }, '"has space" is not a component name'],
    [{ ["x".repeat(101)]: 1 }, "is not a component name"], [{ "Carrusél": 1 }, '"Carrusél" is not a component name'],
    [Object.fromEntries(Array.from({ length: 1001 }, (_, i) => ["C" + i, 1])), "1001 components, at most 1000"],
  ];
  for (const [components, says] of cases) {
    assert.throws(() => new ClientSession({ components }), (error) => error instanceof TypeError
      && error.message.startsWith("PushHub: components must map each component name to the highest version")
      && error.message.includes(says), says);
  }
});

/** A fetch that answers `tree` as version 1 and records the URLs asked for. */
function recordingFetch(tree, asked) {
  return async (url) => {
    asked.push(new URL(url));
    return new Response(JSON.stringify({ name: "home", version: 1, hash: hashOf(tree), tree }), { status: 200 });
  };
}

test("fetchScreen sends the components as ?components=Carousel:2,Text:1 ('' for {}), none without the option; a bad list rejects", async () => {
  const tree = { title: "Hi" };
  const asked = [];
  const options = { url: "ws://hub/v1/connect", device: "d-1", storage: new MemoryStorage(), fetch: recordingFetch(tree, asked) };
  await fetchScreen("home", { ...options, components: { Carousel: 2, Text: 1 } });
  await fetchScreen("home", { ...options, components: {} });
  await fetchScreen("home", options);
  assert.deepEqual(asked.map((url) => url.searchParams.get("components")), ["Carousel:2,Text:1", "", null]);
  assert.equal(componentsQuery({ A: 1 }), "A:1");
  await assert.rejects(fetchScreen("home", { ...options, components: { Carousel: 0 } }), { name: "TypeError", message: /Carousel is 0/ });
  assert.equal(asked.length, 3);
});
