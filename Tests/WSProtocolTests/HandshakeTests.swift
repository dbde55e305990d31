import Testing

@testable import WSProtocol

@Suite struct HandshakeTests {
    static let key = "dGhlIHNhbXBsZSBub25jZQ=="

    static func headers(_ pairs: [(String, String)]) -> HeaderFields { HeaderFields(pairs) }

    static let valid: [(String, String)] = [
        ("Host", "server.example.com"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
        ("Sec-WebSocket-Key", key), ("Sec-WebSocket-Version", "13"),
    ]

    static func replacing(_ name: String, with value: String?) -> HeaderFields {
        var pairs = valid.filter { $0.0 != name }
        if let value { pairs.append((name, value)) }
        return HeaderFields(pairs)
    }

    @Test("§1.3 golden accept key")
    func goldenAcceptKey() {
        #expect(AcceptKey.compute(for: Self.key) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test("a valid request is accepted with the §1.3 accept key and the subprotocol the client offered")
    func accepted() throws {
        var headers = Self.replacing("Connection", with: "keep-alive, Upgrade")
        headers.append(name: "Sec-WebSocket-Protocol", value: "chat, pushhub.v1")
        let accepted = try ServerHandshake.accept(
            method: "GET", httpVersion: "HTTP/1.1", headers: headers, subprotocols: ["pushhub.v1"])
        #expect(accepted.acceptKey == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(accepted.subprotocol == "pushhub.v1")
        #expect(accepted.responseHead.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
        #expect(accepted.responseHead.contains("Sec-WebSocket-Protocol: pushhub.v1\r\n"))
    }

    struct Refusal: Sendable, CustomStringConvertible {
        var description: String
        var method = "GET"
        var version = "HTTP/1.1"
        var headers: HeaderFields
        var status: Int
    }

    static let refusals: [Refusal] = [
        Refusal(description: "POST", method: "POST", headers: HeaderFields(valid), status: 405),
        Refusal(description: "HTTP/1.0", version: "HTTP/1.0", headers: HeaderFields(valid), status: 400),
        Refusal(description: "no Host", headers: replacing("Host", with: nil), status: 400),
        Refusal(description: "no Upgrade", headers: replacing("Upgrade", with: nil), status: 426),
        Refusal(description: "Upgrade: h2c", headers: replacing("Upgrade", with: "h2c"), status: 426),
        Refusal(description: "no Connection", headers: replacing("Connection", with: nil), status: 400),
        Refusal(description: "Connection: close", headers: replacing("Connection", with: "close"), status: 400),
        Refusal(description: "version 8", headers: replacing("Sec-WebSocket-Version", with: "8"), status: 426),
        Refusal(description: "no version", headers: replacing("Sec-WebSocket-Version", with: nil), status: 400),
        Refusal(description: "no key", headers: replacing("Sec-WebSocket-Key", with: nil), status: 400),
        Refusal(
            description: "15-byte key", headers: replacing("Sec-WebSocket-Key", with: "MDEyMzQ1Njc4OWFiY2Rl"),
            status: 400),
        Refusal(
            description: "not base64", headers: replacing("Sec-WebSocket-Key", with: "!!!!!!!!!!!!!!!!!!!!!!=="),
            status: 400),
    ]

    @Test("refused requests carry their status and a reason", arguments: refusals)
    func refused(_ refusal: Refusal) {
        #expect {
            _ = try ServerHandshake.accept(
                method: refusal.method, httpVersion: refusal.version, headers: refusal.headers)
        } throws: { error in
            guard let error = error as? HandshakeError else { return false }
            return error.status == refusal.status && !error.reason.isEmpty
        }
    }

    @Test("version 8 is answered with Sec-WebSocket-Version: 13")
    func versionHeader() throws {
        do {
            _ = try ServerHandshake.accept(
                method: "GET", httpVersion: "HTTP/1.1", headers: Self.replacing("Sec-WebSocket-Version", with: "8"))
            Issue.record("version 8 was accepted")
        } catch {
            #expect(error.headers["Sec-WebSocket-Version"] == "13")
        }
    }

    @Test("the client side builds a request the server accepts, and verifies the 101")
    func clientServerRoundTrip() throws {
        let client = ClientHandshake(host: "127.0.0.1:8080", path: "/v1/connect", subprotocols: ["pushhub.v1"])
        let text = String(decoding: client.request, as: UTF8.self)
        var lines = text.split(separator: "\r\n")
        #expect(lines.removeFirst() == "GET /v1/connect HTTP/1.1")
        let headers = HeaderFields(
            lines.map { line in
                let colon = line.firstIndex(of: ":")!
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingHTTPWhitespace())
            })
        let accepted = try ServerHandshake.accept(
            method: "GET", httpVersion: "HTTP/1.1", headers: headers, subprotocols: ["pushhub.v1"])
        let response = try #require(
            try ClientHandshake.parseResponse(Array(accepted.responseHead.utf8) + [0x81, 0x00]))
        #expect(response.headLength == accepted.responseHead.utf8.count)
        #expect(try client.verify(response) == "pushhub.v1")
    }

    @Test("the client refuses a wrong accept key and a non-101")
    func clientRefusals() throws {
        let client = ClientHandshake(host: "h", path: "/")
        let wrong = try #require(
            try ClientHandshake.parseResponse(
                Array(
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAA\r\n\r\n"
                        .utf8)))
        #expect(throws: HandshakeError.self) { try client.verify(wrong) }
        let notFound = try #require(try ClientHandshake.parseResponse(Array("HTTP/1.1 404 Not Found\r\n\r\n".utf8)))
        #expect(throws: HandshakeError.self) { try client.verify(notFound) }
        #expect(try ClientHandshake.parseResponse(Array("HTTP/1.1 101 Switching".utf8)) == nil)
    }
}
