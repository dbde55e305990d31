// What the client's API is made of, so that `import PushHubClient` is enough for an app: the
// screen tree (`JSONValue`, `JSONPatch`, `ScreenHash`), and from `Portable` the reconnect
// `Backoff` (shared with the hub's Redis link) and the `HeaderFields` transports fill in.
@_exported import Portable
@_exported import ScreenTree
