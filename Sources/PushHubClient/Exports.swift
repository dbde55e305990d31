// What the client's API is made of, so that `import PushHubClient` is enough for an app: the
// screen tree (`JSONValue`, `JSONPatch`, `ScreenHash`), the reconnect `Backoff` (in `Sockets`, shared
// with the hub's Redis link) and the header fields transports fill in.
@_exported import ScreenTree
@_exported import Sockets
import WSProtocol

public typealias HeaderFields = WSProtocol.HeaderFields
