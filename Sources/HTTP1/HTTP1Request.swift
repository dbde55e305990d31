/// An HTTP/1.1 request the hub sends (RFC 9112 §3): method, request target (origin form: path
/// and query), header fields, body. `Host`, `Content-Length` and `Connection` are the writer's:
/// the ones given here are ignored.
public struct HTTP1Request: Sendable {
    public var method: String
    /// The origin form: "/path?query".
    public var target: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String, target: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }
}
