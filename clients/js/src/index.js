// PushHub JavaScript client, protocol v1 (DESIGN §12, docs/protocol.md, docs/clients.md).
// One ES module, no dependencies: browsers and React Native.
//
// What it does for the app: hello/welcome, subscribe with `have` (resume), RFC 6902 patches
// applied copy-on-write (unchanged subtrees keep their identity), every new tree checked against
// the hub's hash (RFC 8785 canonical JSON + SHA-256), a clean resubscribe on a mismatch or a
// patch from a version it does not hold, syncs deduped by id, delivered after a random
// 0..jitter_ms wait and acked, `rendered`, `have` and `last_sync` kept in a storage, reconnect
// with exponential backoff and full jitter, typed events for close codes and hub errors. And
// `fetchScreen`: the same tree over HTTP with an ETag, for code that cannot hold a socket.
//
// The protocol's rules are a state machine without I/O (ClientSession: messages in, actions
// out); PushHub performs its actions over a Transport (the WebSocket, reconnects, dead links).

// The public API, as pushhub-client.d.ts declares it: one `export { … } from` line per module.
export { PatchError, applyPatch, jsonEqual, parsePointer } from "./json-patch.js";
export { canonicalize, deepFreeze } from "./canonical-json.js";
export { sha256, sha256Hex, utf8 } from "./sha256.js";
export { screenHash } from "./screen-hash.js";
export { MemoryStorage, storageScope, tokenSubject } from "./storage.js";
export { FetchError, fetchScreen, screenURL } from "./fetch-screen.js";
export { CloseCodes, DEFAULT_BACKOFF, reconnectDelay } from "./reconnect-schedule.js";
export { PROTOCOL } from "./client-session.js";
export { PushHub } from "./pushhub.js";
