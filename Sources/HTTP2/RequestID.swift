/// The caller's name for one request on an `HTTP2ClientConnection`, used in its actions.
/// Distinct from the stream identifier: a request keeps its ID when it is sent again on
/// another stream or connection.
public struct RequestID: Hashable, Sendable, CustomStringConvertible {
    public var value: UInt64

    public init(_ value: UInt64) { self.value = value }

    public var description: String { "request \(value)" }
}
