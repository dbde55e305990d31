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

    /// What the parser made of `bytes` fed in two reads, split at `split`: a head, a refusal, or
    /// nothing yet.
    enum Outcome: Equatable {
        case head(RequestHead)
        case refused(HTTPError)
        case incomplete
    }

    static func outcome(_ bytes: [UInt8], split: Int) -> Outcome {
        var parser = RequestParser()
        do {
            if case .head(let head, _) = try feed(&parser, bytes[..<split]) { return .head(head) }
            if case .head(let head, _) = try feed(&parser, bytes[split...]) { return .head(head) }
            return .incomplete
        } catch {
            return .refused(error)
        }
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
        for bad in ["HTTP/a.1", "HTTP/1.x", "HTTP/1,1", "HTTP/11.", "HTTPS1.1", "http/1.1", "Http/1.1", "HTTP/1"] {
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

    @Test("a well-formed version other than HTTP/1.1 and HTTP/1.0 is 505 (RFC 9110 §15.6.6)")
    func unsupportedVersions() {
        for version in ["HTTP/1.2", "HTTP/2.0", "HTTP/0.9", "HTTP/9.9"] {
            var parser = RequestParser()
            #expect(
                throws: HTTPError(status: 505, reason: "\(version) is not supported: send HTTP/1.1 or HTTP/1.0"),
                "\(version)"
            ) { try Self.feed(&parser, Array("GET / \(version)\r\nHost: x\r\n\r\n".utf8)[...]) }
        }
    }

    @Test("a target with a byte outside visible ASCII is 400 (found by the http-request fuzzer)")
    func targetIsVisibleASCII() {
        for target: [UInt8] in [[0x2F, 0xCD, 0x89], Array("/é".utf8), [0x2F, 0x61, 0x7F], [0x2F, 0x3F, 0xCC, 0x81]] {
            var parser = RequestParser()
            let request = Array("GET ".utf8) + target + Array(" HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            #expect(
                throws: HTTPError(
                    status: 400, reason: "the request target must be visible ASCII (percent-encode the rest)"),
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

    @Test(
        "a line ending in LF without CR is refused (400) as soon as it arrives, at every split",
        arguments: 0...bareLF.count)
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

    // MARK: - Request smuggling (issue #24 item 11): what a strict parser refuses, we refuse

    /// A head a strict parser refuses, why, and the status we answer it with (then close).
    struct Hostile: Sendable, CustomTestStringConvertible {
        var why: String
        var bytes: [UInt8]
        var status = 400
        var testDescription: String { why }

        init(_ why: String, _ text: String, status: Int = 400) {
            self.why = why
            self.bytes = Array(text.utf8)
            self.status = status
        }

        init(_ why: String, bytes: [UInt8], status: Int = 400) {
            self.why = why
            self.bytes = bytes
            self.status = status
        }
    }

    static let get = "GET / HTTP/1.1\r\nHost: x\r\n"
    static let post = "POST / HTTP/1.1\r\nHost: x\r\n"

    static let hostile: [Hostile] = [
        // Line endings (RFC 9112 §2.2): a CR is only ever the first half of CRLF.
        Hostile("bare CR inside a header value", get + "X: a\rb\r\n\r\n"),
        Hostile(
            "bare CR between two headers (llhttp: 'Missing expected LF after header value')",
            get + "Foo: 1\rBar: 2\r\n\r\n"),
        Hostile("bare CR ending the request line", "GET / HTTP/1.1\r\rHost: x\r\n\r\n"),
        Hostile("bare CR before a smuggled request line", get + "\rZGET /evil HTTP/1.1\r\nHost: a\r\n\r\n"),
        Hostile("bare CR right after a header name", "PUT / HTTP/1.1\r\nHost: x\r\nContent\rLength: 3\r\n\r\nabc"),
        Hostile("bare CR in an empty value hiding a second header", post + "x:\rTransfer-Encoding: chunked\r\n\r\n"),
        Hostile("bare CR before the request line", "\rGET / HTTP/1.1\r\nHost: x\r\n\r\n"),
        Hostile(
            "bare LF inside a header line (llhttp: 'Missing expected CR')", get + "Dummy: x\nContent-Length: 23\r\n\r\n"
        ),
        Hostile("bare LF ending the head", get + "\n"),
        Hostile("bare LF before the request line", "\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"),
        Hostile("an empty line before the request line (h11: 'no request line received')", "\r\n" + get + "\r\n"),
        // Control characters (RFC 9110 §5.5): HTAB is the only one a value may hold.
        Hostile("NUL in a header value", get + "X: a\u{0}b\r\n\r\n"),
        Hostile("NUL in a header name", get + "X\u{0}Y: b\r\n\r\n"),
        Hostile("SOH (0x01) in a header value (h11 lets it through, llhttp does not)", get + "X: a\u{1}b\r\n\r\n"),
        Hostile("vertical tab in a header value", get + "X: a\u{B}b\r\n\r\n"),
        Hostile("form feed as a header value (llhttp's 'Invalid header value char')", get + "Header1: \u{C}\r\n\r\n"),
        Hostile("ESC (0x1B) in a header value", get + "X: \u{1B}[31mred\r\n\r\n"),
        Hostile("DEL (0x7F) in a header value", get + "X: a\u{7F}\r\n\r\n"),
        // Field names (RFC 9110 §5.1, RFC 9112 §5.1, §5.2).
        Hostile("whitespace between a header name and its colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n"),
        Hostile("a tab between a header name and its colon", get + "Content-Length\t: 0\r\n\r\n"),
        Hostile("a header name with '@' (not a token)", get + "Fo@: Failure\r\n\r\n"),
        Hostile("a header name with '(' and ')'", get + "X(Y): z\r\n\r\n"),
        Hostile(
            "a header name with a byte above 0x7F", bytes: Array(get.utf8) + [0xC3, 0xA9] + Array(": x\r\n\r\n".utf8)),
        Hostile("an empty header name", get + ": Bar\r\n\r\n"),
        Hostile("obsolete line folding (a continued value)", get + "X: a\r\n b\r\n\r\n"),
        Hostile("obsolete line folding hiding a Content-Length", post + "Foo: bar\r\n Content-Length: 38\r\n\r\n"),
        Hostile("a first header line starting with a space", "GET / HTTP/1.1\r\n Host: x\r\n\r\n"),
        Hostile("a folded header name", get + "name\r\n : value\r\n\r\n"),
        // The request line (RFC 9112 §3).
        Hostile("a method with '('", "G(T / HTTP/1.1\r\nHost: x\r\n\r\n"),
        Hostile("a method with a NUL", "GE\u{0}T / HTTP/1.1\r\nHost: x\r\n\r\n"),
        Hostile("an empty method", " / HTTP/1.1\r\nHost: x\r\n\r\n"),
        Hostile("two spaces after the method", "GET  / HTTP/1.1\r\nHost: x\r\n\r\n"),
        Hostile("a tab in place of a space", "GET\t/ HTTP/1.1\r\nHost: x\r\n\r\n"),
        Hostile("a space inside the target", "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n"),
        Hostile("a control character in the target", "GET /a\u{1}b HTTP/1.1\r\nHost: x\r\n\r\n"),
        Hostile("a target in no form (not /, not http://)", "GET nopath HTTP/1.1\r\nHost: x\r\n\r\n"),
        Hostile("asterisk form (server-wide OPTIONS: the hub has none)", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"),
        Hostile("authority form (CONNECT is for proxies)", "CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n"),
        Hostile("absolute form with userinfo", "GET http://u@x/ HTTP/1.1\r\nHost: x\r\n\r\n"),
        Hostile("absolute form with no host", "GET http:///a HTTP/1.1\r\nHost: x\r\n\r\n"),
        Hostile("a lower-case HTTP name", "GET / http/1.1\r\nHost: x\r\n\r\n"),
        Hostile("a two-digit major version", "GET / HTTP/11.1\r\nHost: x\r\n\r\n"),
        Hostile("a space after the version", "GET / HTTP/1.1 \r\nHost: x\r\n\r\n"),
        Hostile("HTTP/1.2 (llhttp refuses it; RFC 9110 §15.6.6)", "GET / HTTP/1.2\r\nHost: x\r\n\r\n", status: 505),
        Hostile("HTTP/2.0 on a request line", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", status: 505),
        Hostile("HTTP/0.9 spelled out", "GET / HTTP/0.9\r\n\r\n", status: 505),
        // Host (RFC 9112 §3.2).
        Hostile("an HTTP/1.1 request without Host", "GET / HTTP/1.1\r\n\r\n"),
        Hostile("two Host headers", get + "Host: y\r\n\r\n"),
        Hostile("two Host headers in HTTP/1.0", "GET / HTTP/1.0\r\nHost: x\r\nHost: y\r\n\r\n"),
        Hostile("a Host with a space", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n"),
        Hostile("a Host with userinfo", "GET / HTTP/1.1\r\nHost: u@x\r\n\r\n"),
        Hostile("a Host with a slash", "GET / HTTP/1.1\r\nHost: x/y\r\n\r\n"),
        // Body framing (RFC 9112 §6).
        Hostile("two different Content-Lengths", post + "Content-Length: 1\r\nContent-Length: 2\r\n\r\n"),
        Hostile(
            "two equal Content-Lengths (llhttp: 'Duplicate Content-Length')",
            post + "Content-Length: 2\r\nContent-Length: 2\r\n\r\nab"),
        Hostile("a Content-Length list", post + "Content-Length: 2, 2\r\n\r\nab"),
        Hostile("a signed Content-Length", post + "Content-Length: +2\r\n\r\nab"),
        Hostile("a negative Content-Length", post + "Content-Length: -1\r\n\r\n"),
        Hostile("a hexadecimal Content-Length", post + "Content-Length: 0x2\r\n\r\nab"),
        Hostile("a Content-Length with a space inside", post + "Content-Length: 4 2\r\n\r\n"),
        Hostile("an empty Content-Length", post + "Content-Length:\r\n\r\n"),
        Hostile("a Content-Length past Int.max", post + "Content-Length: 99999999999999999999\r\n\r\n"),
        Hostile(
            "Transfer-Encoding with Content-Length", post + "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"),
        Hostile(
            "Content-Length with Transfer-Encoding: identity",
            post + "Content-Length: 1\r\nTransfer-Encoding: identity\r\n\r\n"),
        Hostile("a Transfer-Encoding not ending in chunked", post + "Transfer-Encoding: gzip\r\n\r\n"),
        Hostile("chunked that is not the last coding", post + "Transfer-Encoding: chunked, gzip\r\n\r\n"),
        Hostile(
            "chunked twice, on two lines", post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"),
        Hostile("an empty Transfer-Encoding", post + "Transfer-Encoding:\r\n\r\n"),
        Hostile("Transfer-Encoding in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"),
        Hostile(
            "a coding before chunked (gzip is not decoded here)", post + "Transfer-Encoding: gzip, chunked\r\n\r\n",
            status: 501),
        Hostile(
            "a coding before chunked, on its own line",
            post + "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n", status: 501),
    ]

    @Test(
        "a hostile head is refused with its status at every split point, and never read as a request",
        arguments: hostile)
    func refusesHostile(_ input: Hostile) {
        for split in 0...input.bytes.count {
            let outcome = Self.outcome(input.bytes, split: split)
            guard case .refused(let error) = outcome else {
                Issue.record("split \(split): \(outcome)")
                return
            }
            #expect(error.status == input.status, "split \(split): \(error.reason)")
        }
    }

    @Test("a bare CR is refused as soon as the byte after it arrives, before the head ends")
    func bareCarriageReturnEarly() {
        // "GET / HTTP/1.1" CRLF, "Host: x" CRLF, "X: a" CR "b": no blank line yet.
        let partial = Array("GET / HTTP/1.1\r\nHost: x\r\nX: a\rb".utf8)
        for split in 0...partial.count {
            #expect(
                Self.outcome(partial, split: split)
                    == .refused(HTTPError(status: 400, reason: "the request head has a CR that is not followed by LF")),
                "split \(split)")
        }
        // A CR at the end of a read waits for the next byte.
        var parser = RequestParser()
        #expect((try? Self.feed(&parser, Array("GET / HTTP/1.1\r".utf8)[...])) == .needMoreBytes)
    }

    @Test("nothing after a refused head is parsed: a pipelined request never reaches the caller")
    func refusalSwallowsTheRest() {
        // A head whose second Content-Length a proxy might have used, then a smuggled request.
        let smuggling = Array((Self.post + "Content-Length: 0\r\nContent-Length: 44\r\n\r\n" + Self.get + "\r\n").utf8)
        var parser = RequestParser()
        #expect(throws: HTTPError(status: 400, reason: "the request has more than one Content-Length")) {
            try Self.feed(&parser, smuggling[...])
        }
    }

    /// Heads a strict parser accepts, and what we read from them.
    static let lenientButValid: [(why: String, bytes: [UInt8], check: @Sendable (RequestHead) -> Bool)] = [
        (
            "obs-text (bytes 0x80-0xFF) in a value",
            Array(get.utf8) + Array("X: caf".utf8) + [0xC3, 0xA9] + [13, 10, 13, 10],
            { $0.headers["X"] == "café" }
        ),
        (
            "HTAB and spaces inside a value, trimmed around it", Array((get + "X: \t a \t b \t\r\n\r\n").utf8),
            { $0.headers["X"] == "a \t b" }
        ),
        ("an empty value", Array((get + "X:\r\n\r\n").utf8), { $0.headers["X"] == "" }),
        (
            "every tchar in a header name", Array((get + "!#$%&'*+-.^_`|~09azAZ: v\r\n\r\n").utf8),
            { $0.headers.count(of: "!#$%&'*+-.^_`|~09azAZ") == 1 }
        ),
        ("an unknown method token", Array("PURGE / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), { $0.method == "PURGE" }),
        ("HTTP/1.0 without Host", Array("GET / HTTP/1.0\r\n\r\n".utf8), { $0.version == "HTTP/1.0" }),
        ("an empty Host (RFC 9112 §3.2)", Array("GET / HTTP/1.1\r\nHost:\r\n\r\n".utf8), { $0.headers["Host"] == "" }),
        (
            "a Host with a port and an IPv6 literal", Array("GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n".utf8),
            { _ in true }
        ),
        (
            "a Content-Length with leading zeros", Array((post + "Content-Length: 003\r\n\r\n").utf8),
            { $0.headers["Content-Length"] == "003" }
        ),
        (
            "Transfer-Encoding: chunked alone (the admin port answers 411)",
            Array((post + "Transfer-Encoding: Chunked\r\n\r\n").utf8), { _ in true }
        ),
        (
            "absolute form, kept as its path and query",
            Array("GET http://x:80/v1/stats?a=1 HTTP/1.1\r\nHost: x\r\n\r\n".utf8), { $0.target == "/v1/stats?a=1" }
        ),
        ("absolute form with no path", Array("GET HTTPS://x HTTP/1.1\r\nHost: x\r\n\r\n".utf8), { $0.target == "/" }),
        (
            "absolute form with a query and no path", Array("GET http://x?a=1 HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
            { $0.target == "/?a=1" }
        ),
    ]

    @Test("what a strict parser accepts is read alike at every split point", arguments: 0..<lenientButValid.count)
    func acceptsValid(_ index: Int) {
        let (why, bytes, check) = Self.lenientButValid[index]
        for split in 0...bytes.count {
            guard case .head(let head) = Self.outcome(bytes, split: split) else {
                Issue.record("\(why): split \(split) gave \(Self.outcome(bytes, split: split))")
                return
            }
            #expect(check(head), "\(why): \(head)")
        }
    }

    @Test("an empty line before the request line is refused as soon as its CRLF is in (h11 refuses it)")
    func leadingEmptyLine() throws {
        var parser = RequestParser()
        #expect(try Self.feed(&parser, Array("\r".utf8)[...]) == .needMoreBytes)
        #expect(throws: HTTPError(status: 400, reason: "the request starts with an empty line, not a request line")) {
            try Self.feed(&parser, Array("\n".utf8)[...])
        }
    }
}
