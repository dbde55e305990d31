// What the client's API is made of, so that `import PushHubClient` is enough for an app: the
// screen tree (`JSONValue`, `JSONPatch`, `ScreenHash`) and the header fields transports fill in.
@_exported import ScreenTree
import WSProtocol

public typealias HeaderFields = WSProtocol.HeaderFields
