/// Why an opening handshake was refused: the HTTP status to answer (server side), the headers
/// that status calls for, and one sentence that says what to fix.
///
/// Invariant: `status` is a 4xx code (or 0 on the client side, where there is nobody to answer).
public struct HandshakeError: Error, Equatable, Sendable, CustomStringConvertible {
    public var status: Int
    public var reason: String
    public var headers: HeaderFields

    public init(status: Int, reason: String, headers: HeaderFields = HeaderFields()) {
        self.status = status
        self.reason = reason
        self.headers = headers
    }

    public var description: String { status == 0 ? reason : "\(status): \(reason)" }
}
