/// The client side of the opening handshake (RFC 6455 §4.1): the upgrade request, and the
/// check of the server's answer. `hubctl watch`, the client testee and the tests use it.
///
/// Invariant: `key` is a fresh 16-byte base64 nonce; `verify` accepts only a 101 whose
/// `Sec-WebSocket-Accept` matches it.
public struct ClientHandshake: Sendable {
    public let key: String
    public let host: String
    public let path: String
    public let subprotocols: [String]
    public let extraHeaders: HeaderFields
    /// Whether the request offers permessage-deflate (`DeflateParameters.clientOffer`).
    public let offersCompression: Bool

    public init(
        host: String, path: String, subprotocols: [String] = [], extraHeaders: HeaderFields = HeaderFields(),
        key: String = AcceptKey.randomClientKey(), offersCompression: Bool = false
    ) {
        self.key = key
        self.host = host
        self.path = path
        self.subprotocols = subprotocols
        self.extraHeaders = extraHeaders
        self.offersCompression = offersCompression
    }

    /// The request bytes to send.
    public var request: [UInt8] {
        var head = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        head += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        if !subprotocols.isEmpty { head += "Sec-WebSocket-Protocol: \(subprotocols.joined(separator: ", "))\r\n" }
        if offersCompression { head += "Sec-WebSocket-Extensions: \(DeflateParameters.clientOffer.headerValue)\r\n" }
        for field in extraHeaders { head += "\(field.name): \(field.value)\r\n" }
        return Array((head + "\r\n").utf8)
    }

    /// The parts of a response head the handshake needs.
    public struct Response: Equatable, Sendable {
        public var status: Int
        public var headers: HeaderFields
        /// Bytes the head took; what follows is already WebSocket data.
        public var headLength: Int
    }

    /// Parses a response head from the start of `bytes`.
    /// - Returns: nil while the head is incomplete.
    public static func parseResponse(_ bytes: [UInt8]) throws(HandshakeError) -> Response? {
        guard let end = headEnd(bytes) else {
            if bytes.count > 16 << 10 { throw HandshakeError(status: 0, reason: "the response head exceeds 16 KiB") }
            return nil
        }
        let text = String(decoding: bytes[..<end], as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            throw HandshakeError(status: 0, reason: "the response does not start with an HTTP/1.x status line")
        }
        var headers = HeaderFields()
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                throw HandshakeError(status: 0, reason: "a response header line has no colon")
            }
            headers.append(
                name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingHTTPWhitespace())
        }
        return Response(status: status, headers: headers, headLength: end + 4)
    }

    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4)
        where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }

    /// Checks the server's answer (§4.1, "the client MUST validate").
    /// - Returns: the subprotocol the server chose, if any.
    public func verify(_ response: Response) throws(HandshakeError) -> String? {
        guard response.status == 101 else {
            throw HandshakeError(
                status: 0, reason: "the server answered \(response.status), not 101 Switching Protocols")
        }
        guard response.headers.containsToken("websocket", in: "Upgrade"),
            response.headers.containsToken("upgrade", in: "Connection")
        else {
            throw HandshakeError(status: 0, reason: "the 101 answer lacks Upgrade: websocket or Connection: Upgrade")
        }
        guard response.headers["Sec-WebSocket-Accept"] == AcceptKey.compute(for: key) else {
            throw HandshakeError(status: 0, reason: "Sec-WebSocket-Accept does not match the key sent")
        }
        let chosen = response.headers["Sec-WebSocket-Protocol"]
        if let chosen, !subprotocols.contains(chosen) {
            throw HandshakeError(status: 0, reason: "the server chose subprotocol \(chosen), which was not offered")
        }
        return chosen
    }

    /// The extensions the server's answer agreed to: permessage-deflate's parameters, or nil
    /// without it. An extension the request did not offer, or an answer its offer does not
    /// allow, fails the connection (RFC 6455 §4.1, RFC 7692 §5).
    public func agreedCompression(_ response: Response) throws(HandshakeError) -> DeflateParameters? {
        guard let answered = ExtensionOffer.parse(response.headers) else {
            throw HandshakeError(status: 0, reason: "the server's Sec-WebSocket-Extensions does not parse")
        }
        guard offersCompression else {
            guard answered.isEmpty else {
                throw HandshakeError(status: 0, reason: "the server answered extensions the client did not offer")
            }
            return nil
        }
        return try DeflateParameters.agreed(by: answered)
    }
}
