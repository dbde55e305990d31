/// One RESP2 value, as Redis sends it (https://redis.io/docs/reference/protocol-spec/):
///
/// ```
/// +OK\r\n                       simple string
/// -ERR unknown command\r\n      error
/// :1000\r\n                     integer
/// $5\r\nhello\r\n               bulk string      $-1\r\n  null bulk string
/// *2\r\n:1\r\n:2\r\n            array            *-1\r\n  null array
/// ```
///
/// Invariant: a bulk string holds exactly the bytes Redis sent (binary-safe); nil is Redis's null.
public enum RESPValue: Equatable, Sendable {
    case simpleString(String)
    case error(String)
    case integer(Int64)
    case bulkString([UInt8]?)
    case array([RESPValue]?)

    /// The text of a simple or bulk string (bulk bytes read as UTF-8), else nil.
    public var string: String? {
        switch self {
        case .simpleString(let text): text
        case .bulkString(let bytes?): String(decoding: bytes, as: UTF8.self)
        case .error, .integer, .bulkString(nil), .array: nil
        }
    }

    public var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The elements of a non-null array, else nil.
    public var elements: [RESPValue]? {
        if case .array(let values?) = self { return values }
        return nil
    }

    public var isNull: Bool {
        switch self {
        case .bulkString(nil), .array(nil): true
        case .simpleString, .error, .integer, .bulkString, .array: false
        }
    }

    /// The value as Redis would send it.
    public var encoded: [UInt8] {
        var output: [UInt8] = []
        encode(into: &output)
        return output
    }

    public func encode(into output: inout [UInt8]) {
        func line(_ type: Character, _ text: String) {
            output.append(contentsOf: "\(type)\(text)\r\n".utf8)
        }
        switch self {
        case .simpleString(let text): line("+", text)
        case .error(let text): line("-", text)
        case .integer(let value): line(":", String(value))
        case .bulkString(nil): line("$", "-1")
        case .bulkString(let bytes?):
            line("$", String(bytes.count))
            output.append(contentsOf: bytes)
            output.append(contentsOf: [13, 10])
        case .array(nil): line("*", "-1")
        case .array(let values?):
            line("*", String(values.count))
            for value in values { value.encode(into: &output) }
        }
    }
}
