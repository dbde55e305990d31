import WSProtocol

/// Why a request head was refused, as the status to answer and one sentence.
public struct HTTPError: Error, Equatable, Sendable {
    public var status: Int
    public var reason: String
    public init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }
}

/// A bounded, incremental HTTP/1.1 request-head parser (RFC 9112 §2–§7), as strict as the strict
/// parsers proxies use (llhttp without lenient flags, h11): what either refuses, it refuses.
///
/// Feed it bytes as they arrive; it answers once the blank line ending the head is in, and
/// refuses a head over `maxHeadBytes` (431) or a malformed one (400; 501 for a transfer coding
/// other than chunked, 505 for an HTTP version other than 1.0 and 1.1) as soon as it can tell.
/// Every refusal is final: the caller answers it and closes, because the bytes after a head it
/// could not read cannot be framed (RFC 9112 §2.2, §6.3 — request smuggling lives in that gap).
///
/// What it refuses besides a malformed request line:
/// - a CR not followed by LF, or an LF not preceded by CR, anywhere in the head (§2.2: a bare CR
///   MUST be refused or replaced; a bare LF MAY be accepted, llhttp refuses it);
/// - an empty line before the request line (§2.2 says a server SHOULD skip one; h11 refuses it,
///   and no client we serve sends it);
/// - a header line starting with whitespace (obsolete line folding, §5.2), whitespace between
///   a name and its colon (§5.1, MUST 400), a name that is not a token (RFC 9110 §5.1), a value
///   with a control character other than HTAB (RFC 9110 §5.5: NUL, CR, LF, DEL and the rest);
/// - a missing Host in HTTP/1.1, two Host headers, or a Host that is not `host[:port]` (§3.2);
/// - a Content-Length that is not one run of digits, or two of them even when equal (§6.3);
///   Transfer-Encoding with Content-Length, in HTTP/1.0, or not ending in `chunked` (§6.1, §6.3).
///
/// The request target is origin-form (`/path?query`) or absolute-form (`http://host/path`, which a
/// server MUST accept, §3.2.2), kept as its origin form; asterisk- and authority-form (`OPTIONS *`,
/// `CONNECT host:port`) are for proxies and refused.
///
/// Invariants: it buffers at most `maxHeadBytes`; `scanned` never exceeds the buffer; a
/// returned head's target starts with `/`, its version is `HTTP/1.1` or `HTTP/1.0`, its method
/// and header names are tokens and its header values hold no control character but HTAB.
public struct RequestParser: Sendable {
    /// What a feed produced: nothing yet, or a complete head and how many fed bytes follow it.
    public enum Step: Sendable, Equatable {
        case needMoreBytes
        /// A complete head; `leftover` is how many of the bytes fed last came after it.
        case head(RequestHead, leftover: Int)
    }

    public static let defaultMaxHeadBytes = 8 << 10
    public let maxHeadBytes: Int
    private var buffer: [UInt8] = []
    private var scanned = 0

    public init(maxHeadBytes: Int = RequestParser.defaultMaxHeadBytes) { self.maxHeadBytes = maxHeadBytes }

    /// True when no byte of a next request has arrived.
    public var isEmpty: Bool { buffer.isEmpty }

    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(HTTPError) -> Step {
        let before = buffer.count
        let room = maxHeadBytes - before
        buffer.append(contentsOf: bytes.prefix(room))
        guard let end = try findHeadEnd() else {
            if buffer.count >= maxHeadBytes {
                throw HTTPError(status: 431, reason: "the request head exceeds \(maxHeadBytes) bytes")
            }
            return .needMoreBytes
        }
        let head = try parse(buffer[..<end])
        let consumedFromInput = (end + 4) - before
        let leftover = bytes.count - consumedFromInput
        buffer = []
        scanned = 0
        return .head(head, leftover: leftover)
    }

    /// Where the blank line ending the head starts, once it is in.
    /// - Throws: 400 at a line feed without its carriage return, or a carriage return followed
    ///   by anything but a line feed (RFC 9112 §2.2), as soon as the byte after it is in: waiting
    ///   for a CRLF that never comes would hang until the 408.
    private mutating func findHeadEnd() throws(HTTPError) -> Int? {
        if buffer.starts(with: Self.crlf) {
            throw HTTPError(status: 400, reason: "the request starts with an empty line, not a request line")
        }
        var i = max(0, scanned - 3)
        while i < buffer.count {
            if buffer[i] == 10 && (i == 0 || buffer[i - 1] != 13) {
                throw HTTPError(status: 400, reason: "a line of the request ends in LF without CR")
            }
            if buffer[i] == 13 && i + 1 < buffer.count && buffer[i + 1] != 10 {
                throw HTTPError(status: 400, reason: "the request head has a CR that is not followed by LF")
            }
            if i + 3 < buffer.count && buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13
                && buffer[i + 3] == 10
            {
                return i
            }
            i += 1
        }
        scanned = buffer.count
        return nil
    }

    /// Parses a complete head (without its final blank line; every line ends in CRLF, no bare CR
    /// or LF is left) byte by byte: strings are made only for the method, target, version and
    /// each header's name and value.
    private func parse(_ bytes: ArraySlice<UInt8>) throws(HTTPError) -> RequestHead {
        guard !bytes.contains(0) else { throw HTTPError(status: 400, reason: "the request head contains a NUL byte") }
        var lines = Self.lines(bytes)[...]
        let (method, target, version) = try Self.requestLine(lines.removeFirst())
        var headers = HeaderFields()
        for line in lines {
            let (name, value) = try Self.field(line)
            headers.append(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
        }
        try Self.checkHost(headers, version: version)
        try Self.checkFraming(headers, version: version)
        return RequestHead(method: method, target: target, version: version, headers: headers)
    }

    // MARK: - Request line (RFC 9112 §3)

    /// `method SP request-target SP HTTP-version`, one space each.
    private static func requestLine(_ line: ArraySlice<UInt8>) throws(HTTPError) -> (String, String, String) {
        let parts = line.split(separator: UInt8(ascii: " "), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(HTTPToken.isTokenByte) else {
            throw HTTPError(status: 400, reason: "the request line must be METHOD TARGET HTTP/1.1")
        }
        let version = parts[2]
        guard version.elementsEqual(http11) || version.elementsEqual(http10) else {
            guard isHTTPVersion(version) else {
                throw HTTPError(status: 400, reason: "the request line names no HTTP version")
            }
            // RFC 9110 §15.6.6: a well-formed version this server does not speak. llhttp refuses
            // every version but 0.9, 1.0, 1.1 and 2.0; HTTP/2 does not start with a request line.
            throw HTTPError(
                status: 505,
                reason: "\(String(decoding: version, as: UTF8.self)) is not supported: send HTTP/1.1 or HTTP/1.0")
        }
        // RFC 9112 §3.2, RFC 3986 §2: a target is visible ASCII, anything else percent-encoded. A raw
        // byte above 0x7E would also make the target's String disagree with its bytes (a combining
        // mark after `/` or `?` merges with it into one Character).
        guard parts[1].allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw HTTPError(status: 400, reason: "the request target must be visible ASCII (percent-encode the rest)")
        }
        let target: [UInt8]
        if parts[1].first == UInt8(ascii: "/") {
            target = Array(parts[1])
        } else if let origin = try originForm(ofAbsolute: parts[1]) {
            target = origin
        } else {
            throw HTTPError(status: 400, reason: "the request target must be a path starting with / (or an http URL)")
        }
        return (
            String(decoding: parts[0], as: UTF8.self), String(decoding: target, as: UTF8.self),
            String(decoding: version, as: UTF8.self)
        )
    }

    private static let crlf: [UInt8] = [13, 10]
    private static let httpSlash = Array("HTTP/".utf8)
    private static let http11 = Array("HTTP/1.1".utf8)
    private static let http10 = Array("HTTP/1.0".utf8)
    private static let schemeSeparator = Array("://".utf8)

    /// `HTTP/` DIGIT `.` DIGIT (RFC 9112 §2.3): anything else in its place is no version.
    static func isHTTPVersion(_ bytes: ArraySlice<UInt8>) -> Bool {
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        let start = bytes.startIndex
        return bytes.count == 8 && bytes.starts(with: httpSlash) && isDigit(bytes[start + 5])
            && bytes[start + 6] == UInt8(ascii: ".") && isDigit(bytes[start + 7])
    }

    /// The origin form (`/path?query`) of an absolute-form target `http[s]://authority[/path][?query]`
    /// (RFC 9112 §3.2.2), or nil when the target is not one. The authority is checked like a Host
    /// (no userinfo: RFC 9110 §4.2.4); it is not compared with the Host header (the hub serves
    /// every name alike).
    static func originForm(ofAbsolute target: ArraySlice<UInt8>) throws(HTTPError) -> [UInt8]? {
        guard let separator = target.firstRange(of: schemeSeparator) else { return nil }
        let scheme = target[..<separator.lowerBound]
        guard scheme.caseInsensitiveEquals("http".utf8) || scheme.caseInsensitiveEquals("https".utf8) else {
            return nil
        }
        let afterScheme = target[separator.upperBound...]
        let authorityEnd =
            afterScheme.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        guard !authority.isEmpty, authority.allSatisfy(isAuthorityByte) else {
            throw HTTPError(status: 400, reason: "the request target's authority is not host[:port]")
        }
        let rest = afterScheme[authorityEnd...]
        return rest.first == UInt8(ascii: "/") ? Array(rest) : [UInt8(ascii: "/")] + rest
    }

    // MARK: - Header fields (RFC 9112 §5, RFC 9110 §5)

    /// `field-name ":" OWS field-value OWS`, the value without its surrounding whitespace.
    private static func field(_ line: ArraySlice<UInt8>) throws(HTTPError) -> (ArraySlice<UInt8>, ArraySlice<UInt8>) {
        if let first = line.first, first == 0x20 || first == 0x09 {
            throw HTTPError(
                status: 400, reason: "a header line starts with whitespace (obsolete line folding is refused)")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon != line.startIndex else {
            throw HTTPError(status: 400, reason: "a header line is not NAME: VALUE")
        }
        let name = line[..<colon]
        if let last = name.last, last == 0x20 || last == 0x09 {
            throw HTTPError(status: 400, reason: "a header name is followed by whitespace before its colon")
        }
        guard name.allSatisfy(HTTPToken.isTokenByte) else {
            throw HTTPError(status: 400, reason: "a header name must be a token (letters, digits, !#$%&'*+-.^_`|~)")
        }
        var value = line[(colon + 1)...]
        while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
        while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
        guard value.allSatisfy(isFieldValueByte) else {
            throw HTTPError(
                status: 400,
                reason: "the value of \(String(decoding: name, as: UTF8.self)) holds a control character")
        }
        return (name, value)
    }

    /// field-vchar, SP or HTAB (RFC 9110 §5.5): visible ASCII and obs-text (0x80–0xFF); no
    /// control character (NUL, CR, LF, DEL, …) but HTAB.
    static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == 0x09 || (0x20...0x7E).contains(byte) || byte >= 0x80
    }

    /// A byte of `host[:port]` (RFC 3986 §3.2.2: reg-name, IPv4, or an IP literal in brackets):
    /// unreserved, pct-encoded, sub-delims, `:`, `[`, `]`. Not `@` (no userinfo) nor whitespace.
    static func isAuthorityByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-._~%!$&'()*+,;=:[]".utf8.contains(byte)
        }
    }

    /// RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request without Host, and to any
    /// request with two Host lines or an invalid Host value (an empty one is valid).
    private static func checkHost(_ headers: HeaderFields, version: String) throws(HTTPError) {
        switch headers.count(of: "Host") {
        case 0:
            if version == "HTTP/1.1" {
                throw HTTPError(status: 400, reason: "an HTTP/1.1 request needs a Host header")
            }
        case 1:
            if let host = headers["Host"], !host.utf8.allSatisfy(isAuthorityByte) {
                throw HTTPError(status: 400, reason: "the Host header is not host[:port]")
            }
        default:
            throw HTTPError(status: 400, reason: "the request has more than one Host header")
        }
    }

    /// The body's framing must be unambiguous (RFC 9112 §6): at most one Content-Length, of
    /// digits only; Transfer-Encoding never with it nor in HTTP/1.0, and ending in one `chunked`.
    /// Equal duplicates and `5, 5` lists are refused too (RFC 9112 §6.3 lets a recipient accept
    /// them; llhttp refuses them): a proxy in front may have read either one.
    private static func checkFraming(_ headers: HeaderFields, version: String) throws(HTTPError) {
        let lengths = headers.count(of: "Content-Length")
        guard lengths <= 1 else {
            throw HTTPError(status: 400, reason: "the request has more than one Content-Length")
        }
        if let length = headers["Content-Length"], contentLength(length) == nil {
            throw HTTPError(status: 400, reason: "Content-Length must be a number of digits")
        }
        guard headers.count(of: "Transfer-Encoding") > 0 else { return }
        guard lengths == 0 else {
            throw HTTPError(status: 400, reason: "the request has both Transfer-Encoding and Content-Length")
        }
        guard version == "HTTP/1.1" else {
            throw HTTPError(status: 400, reason: "an HTTP/1.0 request cannot use Transfer-Encoding")
        }
        let codings = headers.elements("Transfer-Encoding")
        let chunked = codings.filter { $0.caseInsensitiveEquals("chunked") }.count
        guard let last = codings.last, last.caseInsensitiveEquals("chunked"), chunked == 1 else {
            throw HTTPError(status: 400, reason: "Transfer-Encoding must end in chunked, applied once")
        }
        guard codings.count == 1 else {
            // RFC 9112 §6.1: a coding the server does not understand is a 501.
            throw HTTPError(status: 501, reason: "this hub decodes no transfer coding but chunked")
        }
    }

    /// The value of a Content-Length that is 1*DIGIT and fits an Int, or nil.
    static func contentLength(_ text: String) -> Int? {
        guard !text.isEmpty else { return nil }
        var length = 0
        for byte in text.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (times10, overflow) = length.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflow && !overflow2 else { return nil }
            length = sum
        }
        return length
    }

    /// The CRLF-separated lines of `bytes` (`findHeadEnd` has refused every bare CR and LF).
    private static func lines(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var i = start
        while i + 1 < bytes.endIndex {
            if bytes[i] == 13 && bytes[i + 1] == 10 {
                lines.append(bytes[start..<i])
                i += 2
                start = i
            } else {
                i += 1
            }
        }
        lines.append(bytes[start...])
        return lines
    }
}
