/// An HTTP/1.1 request the hub sends (RFC 9112 §3): method, request target (origin form: path
/// and query), header fields, body, and how big a response body it accepts. `Host`,
/// `Content-Length`, `Transfer-Encoding` and `Connection` are the writer's
/// (`HTTP1RequestWriter`): the ones given here are ignored.
public struct HTTP1Request: Sendable {
    public var method: String
    /// The origin form: "/path?query".
    public var target: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// A response body longer than this fails the request and closes its connection (a JWKS
    /// takes 1 MiB, a webhook's answer is read only for its status: 64 KiB).
    public var maxResponseBodyBytes: Int

    /// The bound when none is given: 1 MiB.
    public static let defaultMaxResponseBodyBytes = 1 << 20

    public init(
        method: String, target: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
        maxResponseBodyBytes: Int = HTTP1Request.defaultMaxResponseBodyBytes
    ) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.maxResponseBodyBytes = maxResponseBodyBytes
    }
}
