import Portable

/// Why a JSON text was refused: where (byte offset) and what was expected there.
public struct JSONError: Error, Equatable, Sendable, CustomStringConvertible {
    public var offset: Int
    public var message: String

    public var description: String { "invalid JSON at byte \(offset): \(message)" }
}

/// A strict RFC 8259 parser: no trailing commas, comments, NaN, leading zeros or unescaped
/// control characters; the input must be UTF-8; lone surrogates are refused (I-JSON, RFC 7493).
///
/// Invariant: nesting deeper than `maxDepth` is refused before it can exhaust the stack.
public struct JSONReader {
    public static let defaultMaxDepth = 256
    /// What carries a tree — a snapshot, a patch's ops, a fetched or stored screen — nests it a few
    /// levels deeper than the tree itself, which may be `defaultMaxDepth` deep (the hub refuses
    /// deeper ones); readers of such envelopes (the clients) allow this much.
    public static let envelopeMaxDepth = 2 * defaultMaxDepth

    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private let maxDepth: Int

    private init(_ bytes: UnsafeRawBufferPointer, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// Parses one JSON text (surrounding whitespace allowed), refusing texts over `maxBytes`.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth, maxBytes: Int = .max)
        throws(JSONError) -> JSONValue
    {
        guard bytes.count <= maxBytes else {
            throw JSONError(offset: maxBytes, message: "the text is \(bytes.count) bytes; at most \(maxBytes) are accepted")
        }
        var validator = UTF8Validator()
        guard validator.validate(bytes), validator.isComplete else {
            throw JSONError(offset: validator.invalidByteOffset ?? bytes.count, message: "the text is not valid UTF-8")
        }
        var reader = JSONReader(bytes, maxDepth: maxDepth)
        reader.skipWhitespace()
        let value = try reader.parseValue(depth: 0)
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw reader.error("expected the end of the text after the value") }
        return value
    }

    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONError) -> JSONValue {
        try bytes.withUnsafeBytes { raw in Result { () throws(JSONError) in try parse(raw, maxDepth: maxDepth) } }.get()
    }

    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONError) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }

    private func error(_ message: String) -> JSONError { JSONError(offset: index, message: message) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func parseValue(depth: Int) throws(JSONError) -> JSONValue {
        guard let byte = current else { throw error("expected a value, found the end of the text") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("expected a value (object, array, string, number, true, false or null)")
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) throws(JSONError) -> JSONValue {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count,
            memcmpEqual(bytes.baseAddress! + index, word.utf8Start, count)
        else {
            throw error("expected '\(word)'")
        }
        index += count
        return value
    }

    private func memcmpEqual(_ a: UnsafeRawPointer, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        for i in 0..<count where a.load(fromByteOffset: i, as: UInt8.self) != b[i] { return false }
        return true
    }

    private mutating func parseObject(depth: Int) throws(JSONError) -> JSONValue {
        guard depth <= maxDepth else { throw error("nesting is deeper than \(maxDepth) levels") }
        index += 1
        var members: [JSONObject.Member] = []
        var offsets: [Int] = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(JSONObject())
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a member name in double quotes") }
            let keyOffset = index
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':' after the member name") }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            members.append((key: key, value: value))
            offsets.append(keyOffset)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(try Self.sorted(members, offsets: offsets))
            default: throw error("expected ',' or '}' in the object")
            }
        }
    }

    /// Members in canonical order; a repeated name is refused where it appears the second time.
    private static func sorted(_ members: [JSONObject.Member], offsets: [Int]) throws(JSONError) -> JSONObject {
        var order = Array(members.indices)
        var isSorted = true
        for i in 1..<max(members.count, 1) where !JSONWriter.precedes(members[i - 1].key, members[i].key) {
            isSorted = false
            break
        }
        if !isSorted {
            order.sort { a, b in
                members[a].key.isScalarEqual(to: members[b].key)
                    ? a < b : JSONWriter.precedes(members[a].key, members[b].key)
            }
            for i in 1..<order.count where members[order[i - 1]].key.isScalarEqual(to: members[order[i]].key) {
                throw JSONError(
                    offset: offsets[order[i]], message: "duplicate member name \"\(members[order[i]].key)\"")
            }
            return JSONObject(sortedMembers: order.map { members[$0] })
        }
        return JSONObject(sortedMembers: members)
    }

    private mutating func parseArray(depth: Int) throws(JSONError) -> JSONValue {
        guard depth <= maxDepth else { throw error("nesting is deeper than \(maxDepth) levels") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default: throw error("expected ',' or ']' in the array")
            }
        }
    }

    private mutating func parseString() throws(JSONError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes.
        while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { throw error("a control character must be escaped in a string") }
            index += 1
        }
        guard let stop = current else { throw error("the string is not closed") }
        if stop == UInt8(ascii: "\"") {
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            index += 1
            return text
        }
        var scalars = String.UnicodeScalarView()
        scalars.append(
            contentsOf: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                .unicodeScalars)
        var runStart = index
        while true {
            guard let byte = current else { throw error("the string is not closed") }
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                scalars.append(
                    contentsOf: String(
                        decoding: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index]), as: UTF8.self
                    ).unicodeScalars)
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return String(scalars)
                }
                scalars.append(try parseEscape())
                runStart = index
            } else {
                guard byte >= 0x20 else { throw error("a control character must be escaped in a string") }
                index += 1
            }
        }
    }

    private mutating func parseEscape() throws(JSONError) -> Unicode.Scalar {
        index += 1  // backslash
        guard let byte = current else { throw error("the escape is not finished") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let first = try hex4()
            if (0xD800...0xDBFF).contains(first) {
                guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                else {
                    throw error("a high surrogate \\u\(String(first, radix: 16)) must be followed by a low surrogate")
                }
                index += 2
                let second = try hex4()
                guard (0xDC00...0xDFFF).contains(second) else {
                    throw error("expected a low surrogate \\uDC00-\\uDFFF")
                }
                return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
            }
            guard let scalar = Unicode.Scalar(first) else { throw error("a lone low surrogate is not a character") }
            return scalar
        default:
            index -= 1
            throw error("unknown escape; expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX")
        }
    }

    private mutating func hex4() throws(JSONError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw error("expected four hex digits after \\u") }
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("expected four hex digits after \\u")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONError) -> Double {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            throw error("expected a digit in the number")
        }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(next) {
                throw error("a number must not have leading zeros")
            }
        } else {
            skipDigits()
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digitFollows() else { throw error("expected a digit after the decimal point") }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digitFollows() else { throw error("expected a digit in the exponent") }
            skipDigits()
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONError(offset: start, message: "the number \(text) is out of the range of a double")
        }
        return value
    }

    private func digitFollows() -> Bool {
        guard let byte = current else { return false }
        return (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private mutating func skipDigits() {
        while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
    }
}
