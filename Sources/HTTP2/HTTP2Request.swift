/// One request to send on an HTTP/2 connection: the four request pseudo-header fields
/// (RFC 9113 §8.3.1), the other fields and a body, held whole (push requests are small).
///
/// Field names go out lower-cased; fields HTTP/2 forbids (§8.2.2: `connection`, `keep-alive`,
/// `proxy-connection`, `transfer-encoding`, `upgrade`, and `host`, which `:authority` replaces)
/// are left out, and `content-length` is added for a body when not given.
public struct HTTP2Request: Equatable, Sendable {
    public var method: String
    public var scheme: String
    public var authority: String
    public var path: String
    public var headers: [HeaderField]
    public var body: [UInt8]

    public init(
        method: String = "POST", scheme: String = "https", authority: String, path: String,
        headers: [HeaderField] = [], body: [UInt8] = []
    ) {
        self.method = method
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.headers = headers
        self.body = body
    }

    private static let connectionSpecific: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host",
    ]

    /// The header list as it goes on the wire: pseudo-header fields first (§8.3).
    var fieldList: [HeaderField] {
        var fields = [
            HeaderField(":method", method), HeaderField(":scheme", scheme), HeaderField(":authority", authority),
            HeaderField(":path", path),
        ]
        var hasContentLength = false
        for field in headers {
            let name = field.name.lowercased()
            guard !Self.connectionSpecific.contains(name) else { continue }
            if name == "content-length" { hasContentLength = true }
            fields.append(HeaderField(name, field.value))
        }
        if !body.isEmpty && !hasContentLength { fields.append(HeaderField("content-length", String(body.count))) }
        return fields
    }
}
