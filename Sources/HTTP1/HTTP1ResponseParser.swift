import Portable

/// A bounded, incremental HTTP/1.1 response parser (RFC 9112) for one request's answer, as
/// strict as the strict parsers (llhttp without lenient flags, h11): what either refuses, it
/// refuses.
///
/// Feed it the bytes as they arrive, in any chunks; it answers once the response is complete
/// (or the server closed the connection: `endOfStream`). Interim 1xx responses (100 Continue,
/// 103 Early Hints) are read and skipped. The body is framed as RFC 9112 §6.3 says: none for a
/// HEAD request or a 204 or 304; `Transfer-Encoding: chunked` (trailer fields read and dropped);
/// `Content-Length`; else until the server closes. It refuses, as soon as it can tell:
/// - a head (each interim one, the final one, the trailer section) over `maxHeadBytes`, more
///   than `maxFields` fields, a bare CR or LF, obsolete line folding, a field that is not
///   `token: value`, a value with a control character but HTAB;
/// - a status line that is not `HTTP/1.1` or `HTTP/1.0`, a status outside 100–599, a 101;
/// - Content-Length and Transfer-Encoding together, two Content-Lengths, one that is not a
///   number, a coding other than `chunked`, Transfer-Encoding in HTTP/1.0, a chunk size that
///   is not hex or too large to count, chunk data not followed by CRLF;
/// - a body longer than `maxBodyBytes` (announced or not).
/// Every refusal is final (later feeds throw it again): the connection must be closed.
///
/// Whether the connection may carry another request is RFC 9112 §9.3's answer: not when the
/// response says `Connection: close` or its body ends with the connection; in HTTP/1.1 yes, in
/// HTTP/1.0 only with `Connection: keep-alive`.
///
/// Invariants: it holds at most `maxHeadBytes` of head or chunk line and `maxBodyBytes` of
/// body; it returns one response at most, and after it is fed nothing more.
public struct HTTP1ResponseParser: Sendable {
    /// What a feed produced.
    public enum Step: Sendable {
        case needMoreBytes
        /// The response is complete; `leftover` is how many of the bytes fed last came after it
        /// (a server that sends them broke the exchange: the connection must not be reused).
        case response(HTTP1Response, isKeepAlive: Bool, leftover: Int)
    }

    public static let defaultMaxHeadBytes = 64 << 10
    public static let defaultMaxFields = 100

    public let isHeadRequest: Bool
    public let maxBodyBytes: Int
    public let maxHeadBytes: Int
    public let maxFields: Int

    private enum State: Sendable {
        /// Reading a status line and its fields (an interim response's, then the final one's).
        case head
        case body(Framing)
        /// The response was returned.
        case finished
        case failed(HTTP1ResponseError)
    }

    private enum Framing: Sendable {
        case length(remaining: Int)
        case chunked(Chunk)
        case untilClose
    }

    /// Where a chunked body is (RFC 9112 §7.1).
    private enum Chunk: Sendable {
        case size
        case data(remaining: Int)
        /// The CRLF after a chunk's data.
        case dataEnd
        /// After the last chunk: trailer fields until an empty line.
        case trailers(fields: Int, bytes: Int)
    }

    private var state = State.head
    /// The head being read, or the chunk-size, chunk-end or trailer line.
    private var buffer: [UInt8] = []
    /// How far `buffer` was searched for the end of the head.
    private var scanned = 0
    /// Bytes fed so far (to tell a server that never answered from one that stopped midway).
    private var received = 0
    private var response = HTTP1Response(status: 0)
    private var isKeepAlive = false

    /// - Parameter requestMethod: the method of the request answered (a HEAD's answer has no body).
    public init(
        requestMethod: String, maxBodyBytes: Int, maxHeadBytes: Int = HTTP1ResponseParser.defaultMaxHeadBytes,
        maxFields: Int = HTTP1ResponseParser.defaultMaxFields
    ) {
        isHeadRequest = requestMethod == "HEAD"
        self.maxBodyBytes = maxBodyBytes
        self.maxHeadBytes = maxHeadBytes
        self.maxFields = maxFields
    }

    /// Reads `bytes`, the next ones from the connection.
    public mutating func feed(_ bytes: ArraySlice<UInt8>) throws(HTTP1ResponseError) -> Step {
        switch state {
        case .failed(let error): throw error
        case .finished: preconditionFailure("a response parser reads one response: nothing may follow it")
        case .head, .body: break
        }
        received += bytes.count
        do {
            return try read(bytes)
        } catch {
            state = .failed(error)
            throw error
        }
    }

    /// The server closed the connection: the response if its body ends that way, else why not.
    public mutating func endOfStream() throws(HTTP1ResponseError) -> HTTP1Response {
        let error: HTTP1ResponseError
        switch state {
        case .failed(let failure): throw failure
        case .finished: preconditionFailure("a response parser reads one response: nothing may follow it")
        case .body(.untilClose):
            state = .finished
            return response
        case .head: error = received == 0 ? .closedWithoutResponse : .closedInHead(received: buffer.count)
        case .body(.length(let remaining)):
            error = .closedInBody(received: response.body.count, expected: response.body.count + remaining)
        case .body(.chunked): error = .closedInBody(received: response.body.count, expected: nil)
        }
        state = .failed(error)
        throw error
    }

    // MARK: - Reading

    private mutating func read(_ bytes: ArraySlice<UInt8>) throws(HTTP1ResponseError) -> Step {
        var rest = bytes
        while true {
            switch state {
            case .failed, .finished:
                preconditionFailure("read only runs while a response is under way")
            case .head:
                guard let consumed = try readHead(rest) else { return .needMoreBytes }
                rest = rest.dropFirst(consumed)
            case .body(.length(let remaining)):
                let taken = rest.prefix(remaining)
                response.body += taken
                rest = rest.dropFirst(taken.count)
                guard remaining == taken.count else {
                    state = .body(.length(remaining: remaining - taken.count))
                    return .needMoreBytes
                }
                return finish(leftover: rest.count)
            case .body(.untilClose):
                guard response.body.count + rest.count <= maxBodyBytes else { throw .bodyTooLarge(limit: maxBodyBytes) }
                response.body += rest
                return .needMoreBytes
            case .body(.chunked(let chunk)):
                if rest.isEmpty { return .needMoreBytes }
                if let leftover = try readChunked(chunk, &rest) { return finish(leftover: leftover) }
            }
        }
    }

    private mutating func finish(leftover: Int) -> Step {
        state = .finished
        buffer = []
        return .response(response, isKeepAlive: isKeepAlive, leftover: leftover)
    }

    /// Takes head bytes from `bytes` until the blank line that ends a head.
    /// - Returns: how many of `bytes` the head took, once it is complete (nil: all, not yet).
    private mutating func readHead(_ bytes: ArraySlice<UInt8>) throws(HTTP1ResponseError) -> Int? {
        let before = buffer.count
        buffer += bytes.prefix(maxHeadBytes - before)
        guard let end = try headEnd() else {
            if buffer.count >= maxHeadBytes { throw .headTooLarge(limit: maxHeadBytes) }
            return nil
        }
        let consumed = end + 4 - before
        let head = buffer[..<end]
        buffer = []
        scanned = 0
        try startMessage(head)
        return consumed
    }

    /// Where the blank line ending the head starts, once it is in.
    /// - Throws: at a bare CR or LF (RFC 9112 §2.2), or an empty first line, as soon as it is in.
    private mutating func headEnd() throws(HTTP1ResponseError) -> Int? {
        if buffer.starts(with: [13, 10]) { throw .badStatusLine("(an empty line)") }
        var index = max(0, scanned - 3)
        while index < buffer.count {
            let byte = buffer[index]
            if byte == 10, index == 0 || buffer[index - 1] != 13 { throw .bareLineEnding }
            if byte == 13, index + 1 < buffer.count, buffer[index + 1] != 10 { throw .bareLineEnding }
            if byte == 13, index + 3 < buffer.count, buffer[index + 1] == 10, buffer[index + 2] == 13,
                buffer[index + 3] == 10
            {
                return index
            }
            index += 1
        }
        scanned = buffer.count
        return nil
    }

    /// A complete head (CRLF-separated lines, no blank line): an interim response is dropped and
    /// the next head awaited; a final one decides how its body is framed.
    private mutating func startMessage(_ head: ArraySlice<UInt8>) throws(HTTP1ResponseError) {
        let lines = head.split(separator: 13, omittingEmptySubsequences: false).map { line in
            line.first == 10 ? line.dropFirst() : line
        }
        let (version, status) = try Self.statusLine(lines[0])
        guard lines.count - 1 <= maxFields else { throw .tooManyFields(limit: maxFields) }
        var fields: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            let (name, value) = try Self.field(line)
            fields.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        guard status >= 200 else { return }  // 100 Continue, 102, 103 Early Hints: the answer follows
        response = HTTP1Response(status: status, headers: fields)
        let headers = HeaderFields(fields.map { ($0.name, $0.value) })
        let framing = try Self.framing(
            headers, version: version, status: status, isHeadRequest: isHeadRequest, maxBodyBytes: maxBodyBytes)
        if headers.containsToken("close", in: "Connection") {
            isKeepAlive = false
        } else {
            isKeepAlive = version == .http11 || headers.containsToken("keep-alive", in: "Connection")
        }
        switch framing {
        case nil: state = .body(.length(remaining: 0))
        case .untilClose?:
            isKeepAlive = false
            state = .body(.untilClose)
        case let framing?: state = .body(framing)
        }
    }

    // MARK: - Chunked bodies (RFC 9112 §7.1)

    /// Reads what `chunk` expects from `bytes` (not empty), consuming it.
    /// - Returns: how many bytes are left once the body ended (nil: it goes on).
    private mutating func readChunked(_ chunk: Chunk, _ bytes: inout ArraySlice<UInt8>) throws(HTTP1ResponseError)
        -> Int?
    {
        switch chunk {
        case .size:
            let tooLong = HTTP1ResponseError.badChunkSize("a line longer than \(Self.maxChunkLineBytes) bytes")
            guard let line = try takeLine(&bytes, limit: Self.maxChunkLineBytes, else: tooLong) else { return nil }
            let size = try Self.chunkSize(line)
            if size == 0 {
                state = .body(.chunked(.trailers(fields: 0, bytes: 0)))
            } else {
                guard size <= maxBodyBytes - response.body.count else { throw .bodyTooLarge(limit: maxBodyBytes) }
                state = .body(.chunked(.data(remaining: size)))
            }
        case .data(let remaining):
            let taken = bytes.prefix(remaining)
            response.body += taken
            bytes = bytes.dropFirst(taken.count)
            state = .body(.chunked(remaining == taken.count ? .dataEnd : .data(remaining: remaining - taken.count)))
        case .dataEnd:
            buffer.append(bytes.removeFirst())
            guard buffer.first == 13, buffer.count < 2 || buffer[1] == 10 else { throw .badChunkEnd }
            if buffer.count == 2 {
                buffer = []
                state = .body(.chunked(.size))
            }
        case .trailers(let fields, let size):
            let tooLarge = HTTP1ResponseError.headTooLarge(limit: maxHeadBytes)
            guard let line = try takeLine(&bytes, limit: maxHeadBytes - size, else: tooLarge) else { return nil }
            if line.isEmpty { return bytes.count }
            guard fields < maxFields else { throw .tooManyFields(limit: maxFields) }
            _ = try Self.field(line[...])
            state = .body(.chunked(.trailers(fields: fields + 1, bytes: size + line.count + 2)))
        }
        return nil
    }

    /// A chunk-size line with its extensions is at most this long.
    public static let maxChunkLineBytes = 4096

    /// Takes bytes from `bytes` into `buffer` through the next CRLF.
    /// - Returns: the line without its CRLF once it is complete (`buffer` is then empty).
    /// - Throws: `tooLong` past `limit` bytes, or at a bare CR or LF.
    private mutating func takeLine(
        _ bytes: inout ArraySlice<UInt8>, limit: Int, else tooLong: HTTP1ResponseError
    ) throws(HTTP1ResponseError) -> [UInt8]? {
        while let byte = bytes.first {
            bytes = bytes.dropFirst()
            if byte == 10 {
                guard buffer.last == 13 else { throw .bareLineEnding }
                let line = Array(buffer.dropLast())
                buffer = []
                return line
            }
            if buffer.last == 13 { throw .bareLineEnding }
            guard buffer.count < limit else { throw tooLong }
            buffer.append(byte)
        }
        return nil
    }

    /// `1*HEXDIG [ BWS ";" chunk-ext ]`: the size, the extensions checked for control
    /// characters only (they are ignored).
    static func chunkSize(_ line: [UInt8]) throws(HTTP1ResponseError) -> Int {
        let digits = line.prefix { HTTPURL.isHexDigit($0) }
        let rest = line.dropFirst(digits.count)
        guard !digits.isEmpty else { throw .badChunkSize(HTTP1ResponseError.excerpt(line)) }
        if let first = rest.first {
            let extensions = rest.drop { $0 == 0x20 || $0 == 0x09 }
            guard first == 0x20 || first == 0x09 || first == UInt8(ascii: ";"), extensions.first == UInt8(ascii: ";"),
                extensions.allSatisfy(HTTP1Syntax.isFieldValueByte)
            else { throw .badChunkSize(HTTP1ResponseError.excerpt(line)) }
        }
        let significant = digits.drop { $0 == UInt8(ascii: "0") }
        guard significant.count <= 15 else { throw .chunkSizeOverflow }
        return significant.reduce(0) { size, digit in
            size << 4
                | Int(HTTPURL.isDigit(digit) ? digit - UInt8(ascii: "0") : (digit | 0x20) - UInt8(ascii: "a") + 10)
        }
    }

    // MARK: - The head's parts

    enum Version { case http10, http11 }

    /// `HTTP-version SP 3DIGIT [ SP reason-phrase ]` (RFC 9112 §4; a missing reason is taken, as
    /// h11 and llhttp take it).
    static func statusLine(_ line: ArraySlice<UInt8>) throws(HTTP1ResponseError) -> (Version, Int) {
        let bad = HTTP1ResponseError.badStatusLine(HTTP1ResponseError.excerpt(line))
        guard line.count >= 12 else { throw bad }
        let start = line.startIndex
        let version = line[start..<(start + 8)]
        let isDigit = HTTPURL.isDigit
        guard version.starts(with: "HTTP/".utf8), isDigit(version[start + 5]), version[start + 6] == UInt8(ascii: "."),
            isDigit(version[start + 7])
        else { throw bad }
        let parsed: Version
        if version.elementsEqual("HTTP/1.1".utf8) {
            parsed = .http11
        } else if version.elementsEqual("HTTP/1.0".utf8) {
            parsed = .http10
        } else {
            throw .unsupportedVersion(String(decoding: version, as: UTF8.self))
        }
        let code = line[(start + 9)..<(start + 12)]
        guard line[start + 8] == 0x20, code.allSatisfy(isDigit) else { throw bad }
        let reason = line[(start + 12)...]
        guard reason.isEmpty || (reason.first == 0x20 && reason.allSatisfy(HTTP1Syntax.isFieldValueByte)) else {
            throw bad
        }
        let status = code.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        guard (100...599).contains(status), status != 101 else { throw .badStatus(status) }
        return (parsed, status)
    }

    /// `field-name ":" OWS field-value OWS` (RFC 9112 §5), the value without its whitespace.
    static func field(_ line: ArraySlice<UInt8>) throws(HTTP1ResponseError) -> (ArraySlice<UInt8>, ArraySlice<UInt8>) {
        if let first = line.first, first == 0x20 || first == 0x09 { throw .obsoleteLineFolding }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), HTTP1Syntax.isToken(line[..<colon]) else {
            throw .badFieldLine(HTTP1ResponseError.excerpt(line))
        }
        let name = line[..<colon]
        var value = line[(colon + 1)...]
        while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
        while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
        guard value.allSatisfy(HTTP1Syntax.isFieldValueByte) else {
            throw .badFieldValue(name: String(decoding: name, as: UTF8.self))
        }
        return (name, value)
    }

    /// How the body of a final response is framed (RFC 9112 §6.3); nil: it has none.
    private static func framing(
        _ headers: HeaderFields, version: Version, status: Int, isHeadRequest: Bool, maxBodyBytes: Int
    ) throws(HTTP1ResponseError) -> Framing? {
        let codings = headers.elements("Transfer-Encoding")
        let hasTransferEncoding = headers.count(of: "Transfer-Encoding") > 0
        let lengths = headers.count(of: "Content-Length")
        if hasTransferEncoding, lengths > 0 { throw .contentLengthWithTransferEncoding }
        if lengths > 1 { throw .severalContentLengths }
        var length: Int?
        if let text = headers["Content-Length"] {
            guard !text.isEmpty, text.utf8.allSatisfy(HTTPURL.isDigit) else {
                throw .badContentLength(HTTP1ResponseError.excerpt(text.utf8))
            }
            let significant = text.utf8.drop { $0 == UInt8(ascii: "0") }
            // 18 digits always fit an Int; a longer number is past any body bound anyway.
            guard significant.count <= 18 else { throw .bodyTooLarge(limit: maxBodyBytes) }
            length = Int(String(decoding: significant, as: UTF8.self)) ?? 0
        }
        if hasTransferEncoding {
            let coding = codings.joined(separator: ", ")
            guard version == .http11, codings.count == 1, codings[0].caseInsensitiveEquals("chunked") else {
                throw .unsupportedTransferEncoding(HTTP1ResponseError.excerpt(coding.utf8))
            }
        }
        if isHeadRequest || status == 204 || status == 304 { return nil }
        if hasTransferEncoding { return .chunked(.size) }
        if let length {
            guard length <= maxBodyBytes else { throw .bodyTooLarge(limit: maxBodyBytes) }
            return length == 0 ? nil : .length(remaining: length)
        }
        return .untilClose
    }
}
