/// One stream a client connection opened for a request (RFC 9113 §5.1): the request body still
/// to send, both flow-control windows, and the response as it arrives. Open from the request's
/// HEADERS until the response ends or either side resets it; a closed stream is dropped.
///
/// Invariants: `bodySent` ≤ `body.count`; `responseBody.count` ≤ the connection's
/// `maxResponseBody`; `status` is set once the final (non-1xx) header section arrived.
struct HTTP2ClientStream {
    let requestID: RequestID
    let isHead: Bool
    /// What the server's window lets us send on this stream (§6.9); negative after a
    /// SETTINGS_INITIAL_WINDOW_SIZE decrease (§6.9.2).
    var sendWindow: Int
    /// What we let the server send before our next WINDOW_UPDATE.
    var receiveWindow: Int
    /// DATA octets received and not yet given back with a WINDOW_UPDATE.
    var unacknowledged = 0
    let body: [UInt8]
    var bodySent = 0
    /// The END_STREAM flag went out (on HEADERS for an empty body, else on the last DATA).
    var isRequestDone: Bool
    var status: Int?
    var headers: [HeaderField] = []
    var responseBody: [UInt8] = []
    private var contentLength: Int?

    init(requestID: RequestID, request: HTTP2Request, sendWindow: Int, receiveWindow: Int) {
        self.requestID = requestID
        isHead = request.method == "HEAD"
        self.sendWindow = sendWindow
        self.receiveWindow = receiveWindow
        body = request.body
        isRequestDone = request.body.isEmpty
    }

    var remainingBody: Int { body.count - bodySent }

    /// Takes a header section (§8.1): an informational one (1xx, ignored), the response's, or
    /// its trailers.
    /// - Returns: nil, or why the section makes the response malformed (§8.1.1).
    mutating func receivedFieldSection(_ fields: [HeaderField], endStream: Bool) -> String? {
        if let problem = Self.problem(in: fields, pseudoHeadersAllowed: status == nil) { return problem }
        guard status == nil else {
            guard endStream else { return "trailers without END_STREAM" }
            headers += fields
            return nil
        }
        guard let first = fields.first, first.name == ":status" else { return "no :status" }
        guard first.value.utf8.count == 3, first.value.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let code = Int(first.value), code >= 100
        else { return ":status \(first.value) is not a three-digit status" }
        if fields.dropFirst().contains(where: { $0.name.hasPrefix(":") }) {
            return "a pseudo-header field other than one :status"
        }
        if code < 200 {
            guard code != 101 else { return "101 (Switching Protocols) does not exist in HTTP/2" }
            return endStream ? "an informational (\(code)) response ends the stream" : nil
        }
        status = code
        headers = Array(fields.dropFirst())
        if let lengthField = headers.first(where: { $0.name == "content-length" }) {
            guard let length = Int(lengthField.value), length >= 0 else {
                return "content-length \(lengthField.value) is not a length"
            }
            contentLength = length
        }
        return nil
    }

    /// Checks the end of the response (§8.1.1: content-length agrees with the DATA received).
    /// - Returns: nil, or why it is malformed.
    func endProblem() -> String? {
        guard status != nil else { return "the stream ended without a response" }
        if let contentLength, contentLength != responseBody.count, !isHead, status != 304 {
            return "content-length \(contentLength) but \(responseBody.count) octets of DATA"
        }
        return nil
    }

    /// Why a header section is malformed (§8.2.1, §8.2.2, §8.3), or nil.
    private static func problem(in fields: [HeaderField], pseudoHeadersAllowed: Bool) -> String? {
        var regularSeen = false
        for field in fields {
            let name = field.name.utf8
            guard !name.isEmpty else { return "an empty field name" }
            if name.first == UInt8(ascii: ":") {
                guard pseudoHeadersAllowed, !regularSeen else {
                    return "pseudo-header field \(field.name) out of place"
                }
            } else {
                regularSeen = true
                if name.contains(where: { $0 <= 0x20 || (0x41...0x5a).contains($0) || $0 >= 0x7f || $0 == 0x3a }) {
                    return "field name \(field.name.debugDescription) is not a lower-case token"
                }
                if connectionSpecific.contains(field.name) { return "connection-specific field \(field.name)" }
            }
            if field.value.utf8.contains(where: { $0 == 0 || $0 == 0x0a || $0 == 0x0d }) {
                return "field \(field.name)'s value holds NUL, CR or LF"
            }
        }
        return nil
    }

    private static let connectionSpecific: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade",
    ]
}
