import Testing

@testable import PushHub

@Suite struct RequestParserTests {
    static let request = Array(
        ("GET /v1/connect?token=a%20b&x=1 HTTP/1.1\r\nHost: hub\r\nUpgrade: websocket\r\n"
            + "Connection: keep-alive, Upgrade\r\n\r\nAFTER").utf8)

    static func feed(_ parser: inout RequestParser, _ bytes: ArraySlice<UInt8>) throws(HTTPError) -> RequestParser.Step
    {
        try Array(bytes).withUnsafeBytes { raw in Result { () throws(HTTPError) in try parser.feed(raw) } }.get()
    }

    @Test("parses the same head at every split point, and counts the bytes after it", arguments: 0...request.count)
    func everySplit(_ split: Int) throws {
        var parser = RequestParser()
        var steps = [try Self.feed(&parser, Self.request[..<split])]
        if case .needMoreBytes = steps[0] { steps.append(try Self.feed(&parser, Self.request[split...])) }
        guard case .head(let head, let leftover) = steps.last! else {
            Issue.record("no head at split \(split)")
            return
        }
        #expect(head.method == "GET")
        #expect(head.path == "/v1/connect")
        #expect(head.query.map { "\($0.name)=\($0.value)" } == ["token=a b", "x=1"])
        #expect(head.headers.containsToken("upgrade", in: "connection"))
        let headEnd = Self.request.count - 5  // "AFTER" follows the head
        #expect(leftover == (split >= headEnd ? split - headEnd : 5))
    }

    @Test("a head over 8 KiB is 431; malformed lines are 400")
    func refusals() {
        var parser = RequestParser()
        let big = Array(("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 9000)).utf8)
        #expect(throws: HTTPError(status: 431, reason: "the request head exceeds 8192 bytes")) {
            try Self.feed(&parser, big[...])
        }
        for bad in [
            "GET /\r\n\r\n", "GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
            "GET nopath HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET / HTTP/1.1\r\n\r\n", "G(T / HTTP/1.1\r\nHost: x\r\n\r\n",
        ] {
            var parser = RequestParser()
            #expect(throws: HTTPError.self) { try Self.feed(&parser, Array(bad.utf8)[...]) }
        }
    }

    @Test("a version that is not HTTP/DIGIT.DIGIT is 400 (found by the http-request fuzzer)")
    func versionGrammar() throws {
        for bad in ["HTTP/a.1", "HTTP/1.x", "HTTP/1,1", "HTTP/11.", "HTTPS1.1"] {
            var parser = RequestParser()
            #expect(throws: HTTPError(status: 400, reason: "the request line names no HTTP version"), "\(bad)") {
                try Self.feed(&parser, Array("GET / \(bad)\r\nHost: x\r\n\r\n".utf8)[...])
            }
        }
        var parser = RequestParser()
        guard case .head(let head, _) = try Self.feed(&parser, Array("GET / HTTP/1.0\r\n\r\n".utf8)[...]) else {
            Issue.record("no head")
            return
        }
        #expect(head.version == "HTTP/1.0")
    }

    @Test("a target with a byte outside visible ASCII is 400 (found by the http-request fuzzer)")
    func targetIsVisibleASCII() {
        for target: [UInt8] in [[0x2F, 0xCD, 0x89], Array("/é".utf8), [0x2F, 0x61, 0x7F], [0x2F, 0x3F, 0xCC, 0x81]] {
            var parser = RequestParser()
            let request = Array("GET ".utf8) + target + Array(" HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            #expect(
                throws: HTTPError(status: 400, reason: "the request target must be visible ASCII (percent-encode the rest)"),
                "\(target)"
            ) { try Self.feed(&parser, request[...]) }
        }
    }

    @Test("keep-alive follows the version and the Connection header")
    func keepAlive() throws {
        var parser = RequestParser()
        guard
            case .head(let head, _) = try Self.feed(
                &parser, Array("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)[...])
        else {
            Issue.record("no head")
            return
        }
        #expect(!head.isKeepAlive)
    }

    static let bareLF = Array("GET /v1/connect HTTP/1.1\nHost: hub\n\n".utf8)

    @Test("a line ending in LF without CR is refused (400) as soon as it arrives, at every split", arguments: 0...bareLF.count)
    func bareLineFeed(_ split: Int) {
        var parser = RequestParser()
        var refusal: HTTPError?
        do {
            if case .needMoreBytes = try Self.feed(&parser, Self.bareLF[..<split]) {
                _ = try Self.feed(&parser, Self.bareLF[split...])
            }
        } catch {
            refusal = error
        }
        #expect(refusal?.status == 400)
    }
}
