import HTTP1
import Testing

@Suite struct HTTP1ResponseParserTests {
    /// A response read to its end: what it was, whether the connection may be reused, what followed.
    struct Parsed: Equatable {
        var status: Int
        var headers: [String]
        var body: [UInt8]
        var isKeepAlive: Bool
        var leftover: Int

        init(status: Int, headers: [String] = [], body: String = "", isKeepAlive: Bool, leftover: Int = 0) {
            self.status = status
            self.headers = headers
            self.body = Array(body.utf8)
            self.isKeepAlive = isKeepAlive
            self.leftover = leftover
        }

        init(_ response: HTTP1Response, isKeepAlive: Bool, leftover: Int) {
            status = response.status
            headers = response.headers.map { "\($0.name): \($0.value)" }
            body = response.body
            self.isKeepAlive = isKeepAlive
            self.leftover = leftover
        }
    }

    /// How reading ended: a response, a refusal, or still waiting.
    enum Outcome: Equatable {
        case parsed(Parsed)
        case refused(HTTP1ResponseError)
        case incomplete
    }

    /// Feeds `bytes` in the reads `cuts` make (offsets where a read ends), then, if the response
    /// is not complete, the end of the stream when `closes`. `leftover` counts from the last read.
    static func parse(
        _ bytes: [UInt8], cuts: [Int] = [], method: String = "GET", maxBody: Int = 1 << 20, closes: Bool = false
    ) -> Outcome {
        var parser = HTTP1ResponseParser(requestMethod: method, maxBodyBytes: maxBody)
        let bounds = [0] + cuts.filter { $0 > 0 && $0 < bytes.count } + [bytes.count]
        do {
            for (start, end) in zip(bounds, bounds.dropFirst()) where start < end || bytes.isEmpty {
                if case .response(let response, let keepAlive, let leftover) = try parser.feed(bytes[start..<end]) {
                    return .parsed(Parsed(response, isKeepAlive: keepAlive, leftover: leftover + bytes.count - end))
                }
            }
            guard closes else { return .incomplete }
            return .parsed(Parsed(try parser.endOfStream(), isKeepAlive: false, leftover: 0))
        } catch {
            return .refused(error)
        }
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Sample responses and what each reads as (`closes`: the server closes after it).
    static let samples: [(name: String, text: String, method: String, closes: Bool, expected: Parsed)] = [
        (
            "Content-Length",
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"keys\": []}\n",
            "GET", false,
            Parsed(
                status: 200, headers: ["Content-Type: application/json", "Content-Length: 13"],
                body: "{\"keys\": []}\n",
                isKeepAlive: true)
        ),
        (
            "chunked, with extensions and trailers",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5;name=value\r\nhello\r\n"  // size 5, an extension
                + "0007 \t; a ; b=\"c\"\r\n, world\r\n"  // leading zeros, whitespace before ';'
                + "A\r\n0123456789\r\n"  // upper-case hex
                + "0\r\nExpires: never\r\nX-Checksum: 1\r\n\r\n",  // last chunk, two trailer fields
            "GET", false,
            Parsed(
                status: 200, headers: ["Transfer-Encoding: chunked"], body: "hello, world0123456789", isKeepAlive: true)
        ),
        (
            "HTTP/1.0, body until close", "HTTP/1.0 200 OK\r\nServer: SimpleHTTP/0.6\r\n\r\nall of it\nuntil close",
            "GET", true,
            Parsed(status: 200, headers: ["Server: SimpleHTTP/0.6"], body: "all of it\nuntil close", isKeepAlive: false)
        ),
        (
            "HTTP/1.1 without a length: until close, not reusable", "HTTP/1.1 200 OK\r\n\r\nabc", "GET", true,
            Parsed(status: 200, body: "abc", isKeepAlive: false)
        ),
        (
            "100 Continue and 103 Early Hints first",
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"
                + "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
            "POST", false, Parsed(status: 201, headers: ["Content-Length: 2"], body: "ok", isKeepAlive: true)
        ),
        (
            "HEAD: a Content-Length but no body", "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n", "HEAD", false,
            Parsed(status: 200, headers: ["Content-Length: 1234"], isKeepAlive: true)
        ),
        (
            "204 has no body", "HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n", "POST", false,
            Parsed(status: 204, headers: ["Server: x"], isKeepAlive: true)
        ),
        (
            "304 has no body, whatever its Content-Length", "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n",
            "GET", false, Parsed(status: 304, headers: ["Content-Length: 99"], isKeepAlive: true)
        ),
        (
            "Connection: close",
            "HTTP/1.1 500 Internal Server Error\r\nConnection: Keep-Alive, CLOSE\r\nContent-Length: 0\r\n\r\n",
            "POST", false,
            Parsed(status: 500, headers: ["Connection: Keep-Alive, CLOSE", "Content-Length: 0"], isKeepAlive: false)
        ),
        (
            "HTTP/1.0 with keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx",
            "GET", false,
            Parsed(status: 200, headers: ["Connection: keep-alive", "Content-Length: 1"], body: "x", isKeepAlive: true)
        ),
        (
            "HTTP/1.0 with a length but no keep-alive", "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", "GET", false,
            Parsed(status: 200, headers: ["Content-Length: 1"], body: "x", isKeepAlive: false)
        ),
        (
            "no reason phrase; whitespace around values; an empty value",
            "HTTP/1.1 404\r\nX-A:  spaced\t \r\nX-B:\r\nContent-Length: 0\r\n\r\n", "GET", false,
            Parsed(status: 404, headers: ["X-A: spaced", "X-B: ", "Content-Length: 0"], isKeepAlive: true)
        ),
        (
            "obs-text in a reason and a value",
            "HTTP/1.1 200 Bien reçu\r\nX-Name: Zoë\r\nContent-Length: 0\r\n\r\n", "GET", false,
            Parsed(status: 200, headers: ["X-Name: Zoë", "Content-Length: 0"], isKeepAlive: true)
        ),
    ]

    @Test("each sample reads the same at every split point", arguments: samples.indices)
    func everySplit(_ index: Int) {
        let sample = Self.samples[index]
        let bytes = Self.bytes(sample.text)
        for cut in 0...bytes.count {
            let outcome = Self.parse(bytes, cuts: [cut], method: sample.method, closes: sample.closes)
            #expect(outcome == .parsed(sample.expected), "\(sample.name), cut at \(cut)")
        }
    }

    @Test("each sample reads the same one byte at a time", arguments: samples.indices)
    func byteByByte(_ index: Int) {
        let sample = Self.samples[index]
        let bytes = Self.bytes(sample.text)
        let outcome = Self.parse(bytes, cuts: Array(0..<bytes.count), method: sample.method, closes: sample.closes)
        #expect(outcome == .parsed(sample.expected), "\(sample.name)")
    }

    @Test("a response is complete at its last byte, not at the close: nothing is waited for")
    func completeWithoutClose() {
        for sample in Self.samples where !sample.closes {
            #expect(
                Self.parse(Self.bytes(sample.text), method: sample.method) == .parsed(sample.expected), "\(sample.name)"
            )
        }
    }

    @Test("bytes after the response are counted as leftover (the connection is not reused)")
    func leftover() {
        let text = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n"
        #expect(
            Self.parse(Self.bytes(text), cuts: [30])
                == .parsed(
                    Parsed(status: 200, headers: ["Content-Length: 2"], body: "ok", isKeepAlive: true, leftover: 17)))
        let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nextra"
        #expect(
            Self.parse(Self.bytes(chunked))
                == .parsed(Parsed(status: 200, headers: ["Transfer-Encoding: chunked"], isKeepAlive: true, leftover: 5))
        )
    }

    // MARK: - Refusals

    static let malformed: [(name: String, text: String, error: HTTP1ResponseError)] = [
        ("not HTTP", "SSH-2.0-OpenSSH_9.6\r\n\r\n", .badStatusLine(#""SSH-2.0-OpenSSH_9.6""#)),
        ("an empty first line", "\r\nHTTP/1.1 200 OK\r\n\r\n", .badStatusLine("(an empty line)")),
        ("HTTP/2 preface answer", "HTTP/2 200\r\n\r\n", .badStatusLine(#""HTTP/2 200""#)),
        ("HTTP/1.2", "HTTP/1.2 200 OK\r\n\r\n", .unsupportedVersion("HTTP/1.2")),
        ("HTTP/0.9-ish lower case", "http/1.1 200 OK\r\n\r\n", .badStatusLine(#""http/1.1 200 OK""#)),
        ("two spaces", "HTTP/1.1  200 OK\r\n\r\n", .badStatusLine(#""HTTP/1.1  200 OK""#)),
        ("a two-digit status", "HTTP/1.1 20 OK\r\n\r\n", .badStatusLine(#""HTTP/1.1 20 OK""#)),
        ("a four-digit status", "HTTP/1.1 2000 OK\r\n\r\n", .badStatusLine(#""HTTP/1.1 2000 OK""#)),
        ("status 600", "HTTP/1.1 600 Odd\r\n\r\n", .badStatus(600)),
        ("status 099", "HTTP/1.1 099 Odd\r\n\r\n", .badStatus(99)),
        ("101 never asked for", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n", .badStatus(101)),
        (
            "a control character in the reason", "HTTP/1.1 200 O\u{1}K\r\n\r\n",
            .badStatusLine(#""HTTP/1.1 200 O\u{01}K""#)
        ),
        ("bare LF line ends", "HTTP/1.1 200 OK\nContent-Length: 0\n\n", .bareLineEnding),
        ("a bare CR", "HTTP/1.1 200 OK\rContent-Length: 0\r\n\r\n", .bareLineEnding),
        ("LF then CRLF", "HTTP/1.1 200 OK\r\nX: a\n\r\n", .bareLineEnding),
        ("obs-fold", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n", .obsoleteLineFolding),
        ("obs-fold with a tab", "HTTP/1.1 200 OK\r\nX: a\r\n\tb\r\n\r\n", .obsoleteLineFolding),
        ("no colon", "HTTP/1.1 200 OK\r\nX a\r\n\r\n", .badFieldLine(#""X a""#)),
        (
            "space before the colon", "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n",
            .badFieldLine(#""Content-Length : 0""#)
        ),
        ("an empty name", "HTTP/1.1 200 OK\r\n: x\r\n\r\n", .badFieldLine(#"": x""#)),
        ("NUL in a value", "HTTP/1.1 200 OK\r\nX: a\u{0}b\r\n\r\n", .badFieldValue(name: "X")),
        ("DEL in a value", "HTTP/1.1 200 OK\r\nX: a\u{7F}\r\n\r\n", .badFieldValue(name: "X")),
        (
            "CL + TE (smuggling)",
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            .contentLengthWithTransferEncoding
        ),
        (
            "TE + CL, TE first", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
            .contentLengthWithTransferEncoding
        ),
        (
            "CL + TE on a 204 too",
            "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n",
            .contentLengthWithTransferEncoding
        ),
        (
            "two equal Content-Lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
            .severalContentLengths
        ),
        ("a list Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 1, 1\r\n\r\nx", .badContentLength(#""1, 1""#)),
        ("a signed Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx", .badContentLength(#""+1""#)),
        ("a hex Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 0x1\r\n\r\nx", .badContentLength(#""0x1""#)),
        ("an empty Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n", .badContentLength(#""""#)),
        (
            "a Content-Length past Int", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
            .bodyTooLarge(limit: 1 << 20)
        ),
        ("gzip", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", .unsupportedTransferEncoding(#""gzip""#)),
        (
            "gzip, chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            .unsupportedTransferEncoding(#""gzip, chunked""#)
        ),
        (
            "chunked twice", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            .unsupportedTransferEncoding(#""chunked, chunked""#)
        ),
        (
            "chunked in HTTP/1.0", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            .unsupportedTransferEncoding(#""chunked""#)
        ),
        (
            "an empty Transfer-Encoding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: \r\n\r\n",
            .unsupportedTransferEncoding(#""""#)
        ),
        (
            "a chunk size that is not hex", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            .badChunkSize(#""zz""#)
        ),
        (
            "a signed chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n",
            .badChunkSize(#""-1""#)
        ),
        (
            "a chunk size with junk after it", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5 x\r\n",
            .badChunkSize(#""5 x""#)
        ),
        (
            "an empty chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n",
            .badChunkSize(#""""#)
        ),
        (
            "a chunk size past 60 bits", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n",
            .chunkSizeOverflow
        ),
        (
            "a chunk size of 2^64 + 1", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000001\r\n",
            .chunkSizeOverflow
        ),
        (
            "a chunk size line with a bare LF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello",
            .bareLineEnding
        ),
        (
            "chunk data longer than its size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n",
            .badChunkEnd
        ),
        (
            "chunk data with only LF after it", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\n0\r\n",
            .badChunkEnd
        ),
        (
            "a malformed trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nnot a field\r\n\r\n",
            .badFieldLine(#""not a field""#)
        ),
        (
            "a folded trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: a\r\n b\r\n\r\n",
            .obsoleteLineFolding
        ),
    ]

    @Test("malformed responses are refused, saying what is wrong, at every split point", arguments: malformed.indices)
    func refused(_ index: Int) {
        let sample = Self.malformed[index]
        let bytes = Self.bytes(sample.text)
        for cut in 0...bytes.count {
            #expect(
                Self.parse(bytes, cuts: [cut], closes: true) == .refused(sample.error), "\(sample.name), cut \(cut)")
        }
        #expect(!sample.error.description.isEmpty)
    }

    @Test("a refusal is final: feeding more throws it again")
    func refusalIsFinal() throws {
        var parser = HTTP1ResponseParser(requestMethod: "GET", maxBodyBytes: 100)
        #expect(throws: HTTP1ResponseError.bareLineEnding) { try parser.feed(Self.bytes("HTTP/1.1 200 OK\n")[...]) }
        #expect(throws: HTTP1ResponseError.bareLineEnding) { try parser.feed(Self.bytes("\r\n\r\n")[...]) }
        #expect(throws: HTTP1ResponseError.bareLineEnding) { try parser.endOfStream() }
    }

    // MARK: - Bounds

    @Test("a body over the request's bound is refused: announced, chunked, or until close")
    func bodyBound() {
        let limit = 10
        let long = "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n"
        #expect(Self.parse(Self.bytes(long), maxBody: limit) == .refused(.bodyTooLarge(limit: 10)))
        let exact = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789"
        #expect(Self.parse(Self.bytes(exact), maxBody: limit) != .refused(.bodyTooLarge(limit: 10)))
        let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n012345\r\n5\r\n"
        #expect(Self.parse(Self.bytes(chunked), maxBody: limit) == .refused(.bodyTooLarge(limit: 10)))
        let huge = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFF\r\n"
        #expect(Self.parse(Self.bytes(huge), maxBody: limit) == .refused(.bodyTooLarge(limit: 10)))
        let untilClose = "HTTP/1.0 200 OK\r\n\r\n" + String(repeating: "x", count: 11)
        for cut in 17...30 {
            #expect(
                Self.parse(Self.bytes(untilClose), cuts: [cut], maxBody: limit) == .refused(.bodyTooLarge(limit: 10)))
        }
    }

    @Test("a head over 64 KiB is refused before more is buffered; so is a 101st field")
    func headBounds() {
        let field = "X-Padding: " + String(repeating: "a", count: 1000) + "\r\n"
        let long = "HTTP/1.1 200 OK\r\n" + String(repeating: field, count: 70)
        #expect(Self.parse(Self.bytes(long)) == .refused(.headTooLarge(limit: 64 << 10)))
        let fitting = "HTTP/1.1 200 OK\r\n" + String(repeating: field, count: 60) + "Content-Length: 0\r\n\r\n"
        if case .parsed(let parsed) = Self.parse(Self.bytes(fitting)) {
            #expect(parsed.headers.count == 61)
        } else {
            Issue.record("a 61 KiB head is read")
        }
        let many = "HTTP/1.1 200 OK\r\n" + String(repeating: "X: 1\r\n", count: 101) + "\r\n"
        #expect(Self.parse(Self.bytes(many)) == .refused(.tooManyFields(limit: 100)))
        let hundred = "HTTP/1.1 200 OK\r\n" + String(repeating: "X: 1\r\n", count: 99) + "Content-Length: 0\r\n\r\n"
        #expect(Self.parse(Self.bytes(hundred)) != .refused(.tooManyFields(limit: 100)))
        let trailers =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + String(repeating: "X: 1\r\n", count: 101)
        #expect(Self.parse(Self.bytes(trailers)) == .refused(.tooManyFields(limit: 100)))
        let longTrailers =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + String(repeating: field, count: 70)
        #expect(Self.parse(Self.bytes(longTrailers)) == .refused(.headTooLarge(limit: 64 << 10)))
        let longSize = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;" + String(repeating: "e", count: 5000)
        #expect(Self.parse(Self.bytes(longSize)) == .refused(.badChunkSize("a line longer than 4096 bytes")))
    }

    @Test("interim responses each have their own head bound; a stream of them is read and dropped")
    func manyInterims() {
        let text =
            String(repeating: "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n", count: 5000)
            + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
        #expect(
            Self.parse(Self.bytes(text), cuts: [1000, 100_000])
                == .parsed(Parsed(status: 200, headers: ["Content-Length: 0"], isKeepAlive: true)))
    }

    // MARK: - The end of the stream

    @Test("a close before the response is complete says how far it got")
    func truncated() {
        #expect(Self.parse([], closes: true) == .refused(.closedWithoutResponse))
        #expect(Self.parse(Self.bytes("HTTP/1.1 200 OK\r\n"), closes: true) == .refused(.closedInHead(received: 17)))
        #expect(
            Self.parse(Self.bytes("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123"), closes: true)
                == .refused(.closedInBody(received: 4, expected: 10)))
        let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
        for cut in 47..<Self.bytes(chunked).count {
            #expect(
                Self.parse(Array(Self.bytes(chunked)[..<cut]), closes: true)
                    == .refused(.closedInBody(received: cut >= 50 ? min(cut - 50, 5) : 0, expected: nil)), "cut \(cut)")
        }
        let interim = "HTTP/1.1 100 Continue\r\n\r\n"
        #expect(Self.parse(Self.bytes(interim), closes: true) == .refused(.closedInHead(received: 0)))
    }

    @Test("every error's sentence is one line of printable text")
    func descriptions() {
        let errors: [HTTP1ResponseError] =
            Self.malformed.map(\.error) + [
                .headTooLarge(limit: 1), .tooManyFields(limit: 1), .bodyTooLarge(limit: 1), .closedWithoutResponse,
                .closedInHead(received: 1), .closedInBody(received: 1, expected: 2),
                .closedInBody(received: 1, expected: nil), .chunkSizeOverflow, .badChunkEnd,
            ]
        for error in errors {
            #expect(error.description.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F }, "\(error)")
        }
    }
}
