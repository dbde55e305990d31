import TestSupport
import Testing

@testable import HTTP2

@Suite struct HPACKHuffmanTests {
    /// Strings and their Huffman codings from RFC 7541 C.4 and C.6.
    static let rfcStrings: [(String, String)] = [
        ("www.example.com", "f1e3 c2e5 f23a 6ba0 ab90 f4ff"),
        ("no-cache", "a8eb 1064 9cbf"),
        ("custom-key", "25a8 49e9 5ba9 7d7f"),
        ("custom-value", "25a8 49e9 5bb8 e8b4 bf"),
        ("302", "6402"),
        ("307", "640e ff"),
        ("private", "aec3 771a 4b"),
        ("Mon, 21 Oct 2013 20:13:21 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff"),
        ("Mon, 21 Oct 2013 20:13:22 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff"),
        ("https://www.example.com", "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3"),
        ("gzip", "9bd9 ab"),
        (
            "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
            """
            94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5
            b106 3d50 07
            """
        ),
    ]

    @Test("the code table is Appendix B's: canonical, complete, and EOS is 30 ones")
    func codeTable() {
        #expect(HuffmanCode.codes.count == 257 && HuffmanCode.bitLengths.count == 257)
        #expect(HuffmanCode.codes[256] == 0x3FFF_FFFF && HuffmanCode.bitLengths[256] == 30)
        // Kraft's sum Σ 2^-length is exactly 1, counted in units of 2^-30.
        #expect(HuffmanCode.bitLengths.reduce(0) { $0 + (1 << (30 - Int($1))) } == 1 << 30)
        // Canonical: sorted by (length, symbol), each code follows from the one before.
        let order = (0...256).sorted {
            (HuffmanCode.bitLengths[$0], $0) < (HuffmanCode.bitLengths[$1], $1)
        }
        var expected: UInt32 = 0
        var previousLength = HuffmanCode.bitLengths[order[0]]
        for (position, symbol) in order.enumerated() {
            let length = HuffmanCode.bitLengths[symbol]
            if position > 0 { expected = (expected + 1) << (length - previousLength) }
            previousLength = length
            #expect(HuffmanCode.codes[symbol] == expected, "symbol \(symbol)")
        }
        // Spot checks against Appendix B's text.
        #expect((HuffmanCode.codes[0x30], HuffmanCode.bitLengths[0x30]) == (0x0, 5))  // '0'
        #expect((HuffmanCode.codes[0x20], HuffmanCode.bitLengths[0x20]) == (0x14, 6))  // ' '
        #expect((HuffmanCode.codes[0x5C], HuffmanCode.bitLengths[0x5C]) == (0x7FFF0, 19))  // '\'
        #expect((HuffmanCode.codes[255], HuffmanCode.bitLengths[255]) == (0x3FF_FFEE, 26))
    }

    @Test("the RFC's Huffman strings encode and decode", arguments: rfcStrings.indices)
    func rfcExamples(_ index: Int) throws {
        let (text, hex) = Self.rfcStrings[index]
        let coded = HPACKExamples.bytes(hex)
        var out: [UInt8] = [0xAA]  // appends after what is there
        Huffman.encode(text.utf8, into: &out)
        #expect(out == [0xAA] + coded)
        #expect(Huffman.encodedLength(text.utf8) == coded.count)
        #expect(try Huffman.decode(coded) == Array(text.utf8))
    }

    @Test("every octet alone, and all 256 in a row, round-trip")
    func everyOctet() throws {
        for octet in UInt8.min...UInt8.max {
            var out: [UInt8] = []
            Huffman.encode([octet], into: &out)
            #expect(out.count == Huffman.encodedLength([octet]))
            #expect(try Huffman.decode(out) == [octet])
        }
        let all = Array(UInt8.min...UInt8.max)
        var out: [UInt8] = []
        Huffman.encode(all, into: &out)
        #expect(try Huffman.decode(out) == all)
    }

    @Test("the table-driven decoder agrees with a bit-by-bit one on random input")
    func matchesNaiveDecoder() throws {
        var random = SeededGenerator(state: 7541)
        for round in 0..<2_000 {
            let length = Int(random.next() % 40)
            let input = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            // Valid codings of random octets, then arbitrary octets (mostly invalid).
            var coded: [UInt8] = []
            Huffman.encode(input, into: &coded)
            #expect(try Huffman.decode(coded) == input)
            #expect(Self.outcome { () throws(HPACKError) in try Huffman.decode(coded) } == .success(input))
            let fast = Self.outcome { () throws(HPACKError) in try Huffman.decode(input) }
            #expect(fast == Self.naiveDecode(input), "round \(round): \(input)")
            // A valid coding is the only one of its symbols: re-encoding gives it back.
            if case .success(let decoded) = fast {
                var again: [UInt8] = []
                Huffman.encode(decoded, into: &again)
                #expect(again == input)
            }
        }
    }

    @Test("padding of up to 7 ones ends a string; a zero in it or more than 7 bits is an error")
    func padding() throws {
        // 'a' is 00011: then three ones of padding.
        #expect(try Huffman.decode([0b0001_1111]) == Array("a".utf8))
        #expect(throws: HPACKError.huffmanPaddingNotEndOfStringPrefix) { try Huffman.decode([0b0001_1110]) }
        #expect(throws: HPACKError.huffmanPaddingNotEndOfStringPrefix) { try Huffman.decode([0b0001_1011]) }
        // 'a' then 3 + 8 ones of padding.
        #expect(throws: HPACKError.huffmanPaddingTooLong(bits: 11)) { try Huffman.decode([0b0001_1111, 0xFF]) }
        #expect(throws: HPACKError.huffmanPaddingTooLong(bits: 8)) { try Huffman.decode([0xFF]) }
        // '0' is 00000: three zero bits of "padding".
        #expect(throws: HPACKError.huffmanPaddingNotEndOfStringPrefix) { try Huffman.decode([0x00]) }
        #expect(try Huffman.decode([]) == [])
    }

    @Test("the EOS symbol inside a string is an error")
    func endOfString() {
        #expect(throws: HPACKError.huffmanEndOfString) { try Huffman.decode([0xFF, 0xFF, 0xFF, 0xFF]) }
        // 'a' (00011), then EOS (30 ones), then one more one bit of padding.
        #expect(throws: HPACKError.huffmanEndOfString) { try Huffman.decode([0x1F, 0xFF, 0xFF, 0xFF, 0xFF]) }
    }

    @Test("decoding depends on the octets, not on the collection holding them")
    func collections() throws {
        let coded = HPACKExamples.bytes("f1e3 c2e5 f23a 6ba0 ab90 f4ff")
        let expected = Array("www.example.com".utf8)
        let padded = [0x00, 0x01] + coded + [0x02]
        #expect(try Huffman.decode(padded[2..<(2 + coded.count)]) == expected)
        #expect(try Huffman.decode(coded.lazy.map { $0 }) == expected)
        #expect(try Huffman.decode(AnyCollection(coded)) == expected)
    }

    static func outcome(_ body: () throws(HPACKError) -> [UInt8]) -> Result<[UInt8], HPACKError> {
        do throws(HPACKError) { return .success(try body()) } catch { return .failure(error) }
    }

    /// A reference decoder: one bit at a time, looking each prefix up among the 257 codes.
    static func naiveDecode(_ bytes: [UInt8]) -> Result<[UInt8], HPACKError> {
        var symbolOf: [Int: Int] = [:]  // length << 32 | code → symbol
        for symbol in 0...256 {
            symbolOf[Int(HuffmanCode.bitLengths[symbol]) << 32 | Int(HuffmanCode.codes[symbol])] = symbol
        }
        var out: [UInt8] = []
        var code = 0
        var length = 0
        for byte in bytes {
            for position in stride(from: 7, through: 0, by: -1) {
                code = code << 1 | Int(byte >> UInt8(position) & 1)
                length += 1
                guard let symbol = symbolOf[length << 32 | code] else { continue }
                if symbol == 256 { return .failure(.huffmanEndOfString) }
                out.append(UInt8(symbol))
                code = 0
                length = 0
            }
        }
        if code != (1 << length) - 1 { return .failure(.huffmanPaddingNotEndOfStringPrefix) }
        if length > 7 { return .failure(.huffmanPaddingTooLong(bits: length)) }
        return .success(out)
    }
}
