/// The server side of the opening handshake (RFC 6455 §4.2): checks an upgrade request and
/// answers 101, or says which status to refuse it with and why.
///
/// Invariant: `accept` succeeds only for a GET over HTTP/1.1 or later with `Host`,
/// `Upgrade: websocket`, `Connection: upgrade`, version 13 and a 16-byte base64 key.
public enum ServerHandshake {
    /// What a valid request agreed on.
    public struct Accepted: Equatable, Sendable {
        public var acceptKey: String
        public var subprotocol: String?
        /// permessage-deflate as agreed (nil: not offered, not wanted, or no offer acceptable).
        public var deflate: DeflateParameters?

        /// The complete 101 response head.
        public var responseHead: String {
            var head = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            head += "Sec-WebSocket-Accept: \(acceptKey)\r\n"
            if let subprotocol { head += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
            if let deflate { head += "Sec-WebSocket-Extensions: \(deflate.response.headerValue)\r\n" }
            return head + "\r\n"
        }
    }

    /// Checks the request.
    /// - Parameters:
    ///   - httpVersion: as on the request line, e.g. `HTTP/1.1`.
    ///   - subprotocols: the ones this endpoint speaks, in preference order; the first the
    ///     client also offers is chosen.
    ///   - compression: whether to agree to permessage-deflate when the client offers it (an
    ///     extension header that does not parse is ignored: the connection goes uncompressed).
    public static func accept(
        method: String, httpVersion: String, headers: HeaderFields,
        subprotocols: [String] = [], compression: Bool = false
    ) throws(HandshakeError) -> Accepted {
        guard method == "GET" else {
            var allow = HeaderFields()
            allow.append(name: "Allow", value: "GET")
            throw HandshakeError(status: 405, reason: "a WebSocket upgrade uses GET, not \(method)", headers: allow)
        }
        guard httpVersion == "HTTP/1.1" || httpVersion.hasPrefix("HTTP/2") || httpVersion.hasPrefix("HTTP/3") else {
            throw HandshakeError(status: 400, reason: "a WebSocket upgrade needs HTTP/1.1 or later, not \(httpVersion)")
        }
        guard headers["Host"] != nil else {
            throw HandshakeError(status: 400, reason: "the request has no Host header")
        }
        guard headers.containsToken("websocket", in: "Upgrade") else {
            var upgrade = HeaderFields()
            upgrade.append(name: "Upgrade", value: "websocket")
            throw HandshakeError(
                status: 426, reason: "this endpoint speaks WebSocket only: send Upgrade: websocket", headers: upgrade)
        }
        guard headers.containsToken("upgrade", in: "Connection") else {
            throw HandshakeError(status: 400, reason: "the Connection header must contain the upgrade token")
        }
        guard let version = headers["Sec-WebSocket-Version"] else {
            throw HandshakeError(status: 400, reason: "the request has no Sec-WebSocket-Version header (want 13)")
        }
        guard version == "13" else {
            var supported = HeaderFields()
            supported.append(name: "Sec-WebSocket-Version", value: "13")
            throw HandshakeError(
                status: 426, reason: "WebSocket version \(version) is not supported; use 13", headers: supported)
        }
        guard headers.count(of: "Sec-WebSocket-Key") <= 1 else {
            throw HandshakeError(status: 400, reason: "the request has more than one Sec-WebSocket-Key header")
        }
        guard let key = headers["Sec-WebSocket-Key"] else {
            throw HandshakeError(status: 400, reason: "the request has no Sec-WebSocket-Key header")
        }
        guard AcceptKey.isValidClientKey(key) else {
            throw HandshakeError(status: 400, reason: "Sec-WebSocket-Key must be base64 of exactly 16 bytes")
        }
        let offered = headers.elements("Sec-WebSocket-Protocol")
        let chosen = subprotocols.first { offered.contains($0) }
        let deflate = compression ? ExtensionOffer.parse(headers).flatMap(DeflateParameters.accept) : nil
        return Accepted(acceptKey: AcceptKey.compute(for: key), subprotocol: chosen, deflate: deflate)
    }
}
