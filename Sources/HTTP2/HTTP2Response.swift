/// A complete response: its status (`:status`), its other fields (trailers appended after the
/// header section's), and its whole body (at most `HTTP2ClientConnection.Settings.maxResponseBody`).
public struct HTTP2Response: Equatable, Sendable {
    public var status: Int
    public var headers: [HeaderField]
    public var body: [UInt8]

    public init(status: Int, headers: [HeaderField] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first field named `name` (lower-case), if any.
    public func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}
