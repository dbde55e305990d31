import TestSupport
import Testing

@testable import PushHub

@Suite struct RESPParserTests {
    /// Replies as Redis sends them, one of each RESP2 type (redis.io/docs/reference/protocol-spec).
    static let replies: [UInt8] = Array(
        ("+OK\r\n"  // simple string
            + "-ERR unknown command 'FOO'\r\n"  // error
            + ":-42\r\n"  // integer
            + "$5\r\nhe\r\no\r\n"  // bulk string holding CR LF (binary-safe)
            + "$0\r\n\r\n"  // empty bulk string
            + "$-1\r\n"  // null bulk string
            + "*-1\r\n"  // null array
            + "*0\r\n"  // empty array
            + "*2\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nr\r\n$2\r\n{}\r\n:7\r\n"  // nested, as XRANGE answers
        ).utf8)

    static let expected: [RESPValue] = [
        .simpleString("OK"), .error("ERR unknown command 'FOO'"), .integer(-42), .bulkString(Array("he\r\no".utf8)),
        .bulkString([]), .bulkString(nil), .array(nil), .array([]),
        .array([
            .array([.bulkString(Array("1-0".utf8)), .array([.bulkString([UInt8(ascii: "r")]), .bulkString(Array("{}".utf8))])]),
            .integer(7),
        ]),
    ]

    private static func parseAll(_ parser: inout RESPParser) throws -> [RESPValue] {
        var values: [RESPValue] = []
        while let value = try parser.next() { values.append(value) }
        return values
    }

    @Test("reads every RESP2 type the same at every split point", arguments: 0...replies.count)
    func everySplit(_ split: Int) throws {
        var parser = RESPParser()
        parser.append(Self.replies[..<split])
        var values = try Self.parseAll(&parser)
        parser.append(Self.replies[split...])
        values += try Self.parseAll(&parser)
        #expect(values == Self.expected)
        #expect(parser.isIdle)
    }

    @Test("reads byte by byte")
    func byteByByte() throws {
        var parser = RESPParser()
        var values: [RESPValue] = []
        for byte in Self.replies {
            parser.append([byte])
            values += try Self.parseAll(&parser)
        }
        #expect(values == Self.expected)
    }

    /// A naive encoder: the reference the parser is checked against.
    private static func encode(_ value: RESPValue) -> [UInt8] { value.encoded }

    private static func randomValue(depth: Int, using generator: inout SeededGenerator) -> RESPValue {
        switch Int.random(in: 0..<(depth < 4 ? 7 : 5), using: &generator) {
        case 0: return .simpleString(String(repeating: "x", count: Int.random(in: 0..<20, using: &generator)))
        case 1: return .error("ERR " + String(Int.random(in: 0..<1000, using: &generator)))
        case 2: return .integer(Int64.random(in: .min ... .max, using: &generator))
        case 3: return .bulkString((0..<Int.random(in: 0..<300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        case 4: return Bool.random(using: &generator) ? .bulkString(nil) : .array(nil)
        default:
            return .array((0..<Int.random(in: 0..<8, using: &generator)).map { _ in randomValue(depth: depth + 1, using: &generator) })
        }
    }

    @Test("agrees with a naive encoder on seeded random replies fed in random pieces")
    func randomReplies() throws {
        var generator = SeededGenerator(state: 6379)
        for _ in 0..<200 {
            let values = (0..<Int.random(in: 1..<10, using: &generator)).map { _ in Self.randomValue(depth: 0, using: &generator) }
            let bytes = values.flatMap(Self.encode)
            var parser = RESPParser()
            var parsed: [RESPValue] = []
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + Int.random(in: 1...64, using: &generator))
                parser.append(bytes[offset..<end])
                parsed += try Self.parseAll(&parser)
                offset = end
            }
            #expect(parsed == values)
            #expect(parser.isIdle)
        }
    }

    private static func failure(_ input: String, limits: RESPParser.Limits = .init()) -> String? {
        var parser = RESPParser(limits: limits)
        parser.append(Array(input.utf8))
        do {
            while try parser.next() != nil {}
            return nil
        } catch {
            return error.description
        }
    }

    @Test("input that is not RESP2 is an error that says what was wrong")
    func malformed() {
        #expect(Self.failure("%1\r\n")?.contains("unexpected type byte 0x25") == true)
        #expect(Self.failure(":12a\r\n")?.contains("integer \"12a\" is not a number") == true)
        #expect(Self.failure("$3\r\nabcd\r\n")?.contains("not followed by CRLF") == true)
        #expect(Self.failure("$-2\r\n")?.contains("length -2") == true)
        #expect(Self.failure("*-5\r\n")?.contains("length -5") == true)
    }

    @Test("a reply past the limits is refused before it is buffered")
    func limits() {
        let small = RESPParser.Limits(maxReplyBytes: 1000, maxDepth: 3, maxLineBytes: 100)
        // A bulk string announced bigger than one reply may be: refused from its header alone.
        #expect(Self.failure("$5000\r\n", limits: small)?.contains("larger than 1000 bytes") == true)
        #expect(Self.failure("$9223372036854775807\r\n", limits: small)?.contains("larger than 1000") == true)
        #expect(Self.failure("*9223372036854775807\r\n", limits: small)?.contains("larger than 1000") == true)
        // Many small elements add up.
        #expect(Self.failure("*400\r\n" + String(repeating: ":1\r\n", count: 400), limits: small)?.contains("larger") == true)
        #expect(Self.failure("*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", limits: small)?.contains("nested deeper than 3") == true)
        #expect(Self.failure("*1\r\n*1\r\n*1\r\n:1\r\n", limits: small) == nil)
        #expect(Self.failure("+" + String(repeating: "a", count: 200), limits: small)?.contains("longer than 100") == true)
    }

    @Test("after an error the parser stays failed")
    func staysFailed() {
        var parser = RESPParser()
        parser.append(Array("?\r\n+OK\r\n".utf8))
        #expect(throws: RESPParser.RESPError.self) { try parser.next() }
        #expect(throws: RESPParser.RESPError.self) { try parser.next() }
    }

    @Test("commands are arrays of bulk strings, binary-safe")
    func commandEncoding() {
        var output: [UInt8] = []
        RedisCommand("SET", bytes: [Array("k".utf8), [0, 13, 10]]).encode(into: &output)
        #expect(
            output
                == Array("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\n".utf8) + [0, 13, 10] + [13, 10])
        #expect(RedisCommand("AUTH", ["user", "secret"]).label == "AUTH")
        #expect(RedisCommand("XADD", ["s", "*"], label: "XADD s").label == "XADD s")
    }
}

extension RESPParserTests {
    @Test("a line with no type byte is an error, not a trap")
    func emptyLine() {
        #expect(Self.failure("\r\n")?.contains("unexpected type byte 0xd") == true)
    }
}

extension RESPParserTests {
    @Test("small elements that each end at a read's end still count against the reply limit")
    func limitAcrossReads() {
        var parser = RESPParser(limits: RESPParser.Limits(maxReplyBytes: 100, maxDepth: 4, maxLineBytes: 100))
        var failed = false
        parser.append(Array("*100\r\n".utf8))
        for _ in 0..<100 where !failed {
            parser.append(Array(":1\r\n".utf8))  // 4 bytes per read: 6 + 100 × 4 > 100
            do { _ = try parser.next() } catch { failed = true }
        }
        #expect(failed)
    }

    @Test("a line of exactly the line limit is read; one byte more is refused")
    func lineLimitIsInclusive() {
        let limits = RESPParser.Limits(maxReplyBytes: 1000, maxDepth: 4, maxLineBytes: 10)
        #expect(Self.failure("+" + String(repeating: "a", count: 10) + "\r\n", limits: limits) == nil)
        #expect(Self.failure("+" + String(repeating: "a", count: 11) + "\r\n", limits: limits)?.contains("longer than 10") == true)
    }
}
