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

/// A bounded, incremental HTTP/1.1 request-head parser (RFC 9112 §2–§5).
///
/// Feed it bytes as they arrive; it answers once the blank line ending the head is in, and
/// refuses a head over `maxHeadBytes` (431) or a malformed one (400) as soon as it can tell.
/// Invariants: it buffers at most `maxHeadBytes`; `scanned` never exceeds the buffer.
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
        // Leading empty lines before a request line are allowed (RFC 9112 §2.2).
        var input = bytes[...]
        if buffer.isEmpty { while let first = input.first, first == 13 || first == 10 { input = input.dropFirst() } }
        let before = buffer.count
        let room = maxHeadBytes - before
        buffer.append(contentsOf: input.prefix(room))
        guard let end = try findHeadEnd() else {
            if buffer.count >= maxHeadBytes {
                throw HTTPError(status: 431, reason: "the request head exceeds \(maxHeadBytes) bytes")
            }
            return .needMoreBytes
        }
        let head = try parse(buffer[..<end])
        let consumedFromInput = (end + 4) - before
        let leftover = input.count - consumedFromInput
        buffer = []
        scanned = 0
        return .head(head, leftover: leftover)
    }

    /// Where the blank line ending the head starts, once it is in.
    /// - Throws: 400 at a line feed without its carriage return (RFC 9112 §2.2 lets a server
    ///   refuse bare LF; waiting for a CRLF that never comes would hang until the 408).
    private mutating func findHeadEnd() throws(HTTPError) -> Int? {
        var i = max(0, scanned - 3)
        while i < buffer.count {
            if buffer[i] == 10 && (i == 0 || buffer[i - 1] != 13) {
                throw HTTPError(status: 400, reason: "a line of the request ends in LF without CR")
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

    /// Parses a complete head (without its final blank line) byte by byte: lines end in CRLF;
    /// strings are made only for the method, target, version and each header's name and value.
    private func parse(_ bytes: ArraySlice<UInt8>) throws(HTTPError) -> RequestHead {
        guard !bytes.contains(0) else { throw HTTPError(status: 400, reason: "the request head contains a NUL byte") }
        var lines = Self.lines(bytes)[...]
        let requestLine = lines.removeFirst()
        let parts = requestLine.split(separator: UInt8(ascii: " "), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(HTTPToken.isTokenByte) else {
            throw HTTPError(status: 400, reason: "the request line must be METHOD TARGET HTTP/1.1")
        }
        let version = String(decoding: parts[2], as: UTF8.self)
        guard Self.isHTTPVersion(parts[2]) else {
            throw HTTPError(status: 400, reason: "the request line names no HTTP version")
        }
        guard parts[1].first == UInt8(ascii: "/") else {
            throw HTTPError(status: 400, reason: "the request target must be a path starting with /")
        }
        // RFC 9112 §3.2, RFC 3986 §2: a target is visible ASCII, anything else percent-encoded. A raw
        // byte above 0x7E would also make the target's String disagree with its bytes (a combining
        // mark after `/` or `?` merges with it into one Character).
        guard parts[1].allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw HTTPError(status: 400, reason: "the request target must be visible ASCII (percent-encode the rest)")
        }
        var headers = HeaderFields()
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon != line.startIndex,
                line[..<colon].allSatisfy(HTTPToken.isTokenByte)
            else {
                throw HTTPError(status: 400, reason: "a header line is not NAME: VALUE")
            }
            var value = line[(colon + 1)...]
            while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
            while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
            headers.append(
                name: String(decoding: line[..<colon], as: UTF8.self), value: String(decoding: value, as: UTF8.self))
        }
        if version == "HTTP/1.1" && headers["Host"] == nil {
            throw HTTPError(status: 400, reason: "an HTTP/1.1 request needs a Host header")
        }
        return RequestHead(
            method: String(decoding: parts[0], as: UTF8.self), target: String(decoding: parts[1], as: UTF8.self),
            version: version, headers: headers)
    }

    private static let httpSlash = Array("HTTP/".utf8)

    /// `HTTP/` DIGIT `.` DIGIT (RFC 9112 §2.3): anything else in its place is no version.
    static func isHTTPVersion(_ bytes: ArraySlice<UInt8>) -> Bool {
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        let start = bytes.startIndex
        return bytes.count == 8 && bytes.starts(with: httpSlash) && isDigit(bytes[start + 5])
            && bytes[start + 6] == UInt8(ascii: ".") && isDigit(bytes[start + 7])
    }

    /// The CRLF-separated lines of `bytes` (a lone CR or LF stays inside its line).
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
