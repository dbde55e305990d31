/// Reads RESP2 replies from bytes as they arrive, in pieces of any size (STYLE §9: every split
/// point gives the same values). Resumable: a reply split across reads is not parsed again from
/// its start; finished elements of an unfinished array wait on a stack.
///
/// Bounded: one reply may take at most `limits.maxReplyBytes` of input (a bigger one is an error
/// before it is buffered), arrays nest at most `limits.maxDepth` deep, and a simple-string,
/// error or length line is at most `limits.maxLineBytes`. A violation is a `RESPError`; the
/// parser is then finished (the connection it reads cannot be trusted to be in step any more).
///
/// Invariant: `buffer[consumed...]` is input not yet part of a returned value or of `stack`.
public struct RESPParser {
    public struct Limits: Sendable {
        public var maxReplyBytes = 64 << 20
        public var maxDepth = 16
        public var maxLineBytes = 64 << 10

        public init(maxReplyBytes: Int = 64 << 20, maxDepth: Int = 16, maxLineBytes: Int = 64 << 10) {
            self.maxReplyBytes = maxReplyBytes
            self.maxDepth = maxDepth
            self.maxLineBytes = maxLineBytes
        }
    }

    /// Input that is not RESP2, or past a limit.
    public struct RESPError: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    public let limits: Limits
    private var buffer: [UInt8] = []
    private var consumed = 0
    /// Arrays begun but not complete: how many elements each still needs, and those it has.
    private var stack: [(remaining: Int, elements: [RESPValue])] = []
    /// Input bytes taken by the reply being read so far (checked against `maxReplyBytes`).
    private var replyBytes = 0
    private var failed: RESPError?

    public init(limits: Limits = Limits()) { self.limits = limits }

    /// Bytes received and not yet returned as part of a value.
    public var bufferedBytes: Int { buffer.count - consumed }

    /// True between replies: nothing is buffered or half-read.
    public var isIdle: Bool { stack.isEmpty && bufferedBytes == 0 }

    public mutating func append(_ bytes: some Collection<UInt8>) {
        if consumed > 0 && consumed >= buffer.count / 2 {
            buffer.removeFirst(consumed)
            consumed = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete reply, or nil until more input arrives.
    public mutating func next() throws(RESPError) -> RESPValue? {
        if let failed { throw failed }
        do {
            while var value = try element() {
                // A finished value is an element of the innermost open array; an array that it
                // completes is in turn an element of its parent, up to the reply itself.
                while true {
                    guard var top = stack.popLast() else {
                        replyBytes = 0
                        return value
                    }
                    top.elements.append(value)
                    top.remaining -= 1
                    if top.remaining > 0 {
                        stack.append(top)
                        break
                    }
                    value = .array(top.elements)
                }
            }
            return nil
        } catch {
            failed = error
            throw error
        }
    }

    /// The next scalar (or empty/null array) at `consumed`; starts arrays on the stack and
    /// returns nil when the input ends before an element does.
    private mutating func element() throws(RESPError) -> RESPValue? {
        while true {
            guard consumed < buffer.count else { return nil }
            let type = buffer[consumed]
            guard Self.types.contains(type) else {
                throw RESPError(description: "unexpected type byte 0x\(String(type, radix: 16)) (not RESP2)")
            }
            guard let lineEnd = lineEnd() else {
                if bufferedBytes > limits.maxLineBytes + 2 {
                    throw RESPError(description: "a line longer than \(limits.maxLineBytes) bytes")
                }
                try check(replyBytes + bufferedBytes)
                return nil
            }
            let line = buffer[(consumed + 1)..<lineEnd]
            let afterLine = lineEnd + 2
            switch type {
            case UInt8(ascii: "+"):
                try take(upTo: afterLine)
                return .simpleString(String(decoding: line, as: UTF8.self))
            case UInt8(ascii: "-"):
                try take(upTo: afterLine)
                return .error(String(decoding: line, as: UTF8.self))
            case UInt8(ascii: ":"):
                let value = try integer(line, "integer")
                try take(upTo: afterLine)
                return .integer(value)
            case UInt8(ascii: "$"):
                guard let length = try length(line, "bulk string") else {
                    try take(upTo: afterLine)
                    return .bulkString(nil)
                }
                try check(replyBytes + (afterLine - consumed) + length + 2)
                let end = afterLine + length
                guard buffer.count >= end + 2 else { return nil }
                guard buffer[end] == 13, buffer[end + 1] == 10 else {
                    throw RESPError(description: "a bulk string of \(length) bytes is not followed by CRLF")
                }
                let bytes = Array(buffer[afterLine..<end])
                try take(upTo: end + 2)
                return .bulkString(bytes)
            case UInt8(ascii: "*"):
                guard let count = try length(line, "array") else {
                    try take(upTo: afterLine)
                    return .array(nil)
                }
                // Every element takes at least 3 bytes (":0\r\n" is 4): a count past what the
                // limit could hold is refused before any element is read.
                try check(replyBytes + (afterLine - consumed) + count * 3)
                try take(upTo: afterLine)
                if count == 0 { return .array([]) }
                guard stack.count < limits.maxDepth else {
                    throw RESPError(description: "arrays nested deeper than \(limits.maxDepth)")
                }
                stack.append((remaining: Int(count), elements: []))
                stack[stack.count - 1].elements.reserveCapacity(min(Int(count), 1024))
            default:
                preconditionFailure("the type byte was checked against RESPParser.types")
            }
        }
    }

    /// The type bytes of RESP2: simple string, error, integer, bulk string, array.
    private static let types: [UInt8] = Array("+-:$*".utf8)

    /// The index of the CR of the line starting at `consumed`, if the whole line is here. The
    /// search starts after the type byte, so a line is never shorter than its type.
    private func lineEnd() -> Int? {
        var index = consumed + 1
        // The type byte, at most `maxLineBytes` of line, then CR at `consumed + 1 + maxLineBytes`.
        let limit = min(buffer.count - 1, consumed + limits.maxLineBytes + 2)
        while index < limit {
            if buffer[index] == 13 && buffer[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }

    /// Consumes input up to `index` as part of the reply being read (counted against the limit:
    /// small elements that each end at a read's end add up too).
    private mutating func take(upTo index: Int) throws(RESPError) {
        replyBytes += index - consumed
        consumed = index
        try check(replyBytes)
    }

    private func check(_ bytes: Int) throws(RESPError) {
        if bytes > limits.maxReplyBytes {
            throw RESPError(description: "a reply larger than \(limits.maxReplyBytes) bytes (the limit for one reply)")
        }
    }

    /// A bulk string's or array's length line: nil for -1 (Redis's null); a length that is
    /// negative, or past what one reply may hold, is an error.
    private func length(_ line: ArraySlice<UInt8>, _ what: String) throws(RESPError) -> Int? {
        let length = try integer(line, "\(what) length")
        if length == -1 { return nil }
        guard length >= 0 else { throw RESPError(description: "a \(what) of length \(length)") }
        try check(Int(min(length, Int64(Int32.max))))
        return Int(length)
    }

    private func integer(_ line: ArraySlice<UInt8>, _ what: String) throws(RESPError) -> Int64 {
        guard let value = Int64(String(decoding: line, as: UTF8.self)) else {
            throw RESPError(description: "\(what) \"\(String(decoding: line.prefix(40), as: UTF8.self))\" is not a number")
        }
        return value
    }
}
