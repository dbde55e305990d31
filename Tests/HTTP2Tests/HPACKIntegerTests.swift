import Testing

@testable import HTTP2

@Suite struct HPACKIntegerTests {
    func encoded(_ value: Int, prefixBits: Int, flags: UInt8 = 0) -> [UInt8] {
        var out: [UInt8] = []
        HPACKInteger.encode(value, prefixBits: prefixBits, flags: flags, into: &out)
        return out
    }

    func decoded(_ bytes: [UInt8], prefixBits: Int) throws(HPACKError) -> (value: Int, consumed: Int) {
        var index = bytes.startIndex
        let value = try HPACKInteger.decode(prefixBits: prefixBits, from: bytes, at: &index)
        return (value, index)
    }

    @Test("C.1.1: 10 with a 5-bit prefix is one octet, the flags kept above it")
    func tenInFiveBits() throws {
        #expect(encoded(10, prefixBits: 5, flags: 0b1110_0000) == [0b1110_1010])
        #expect(try decoded([0b1110_1010], prefixBits: 5) == (10, 1))
    }

    @Test("C.1.2: 1337 with a 5-bit prefix is 31, then 154 and 10")
    func thirteenThirtySevenInFiveBits() throws {
        #expect(encoded(1337, prefixBits: 5) == [0x1F, 0x9A, 0x0A])  // 31 | 1306 % 128 + 128 | 1306 / 128
        #expect(try decoded([0x1F, 0x9A, 0x0A, 0xEE], prefixBits: 5) == (1337, 3))  // stops before 0xEE
    }

    @Test("C.1.3: 42 at an octet boundary is the octet 42")
    func fortyTwoInEightBits() throws {
        #expect(encoded(42, prefixBits: 8) == [42])
        #expect(try decoded([42], prefixBits: 8) == (42, 1))
    }

    @Test("a value equal to the prefix's maximum takes a second octet of 0")
    func prefixMaximum() throws {
        #expect(encoded(31, prefixBits: 5) == [0x1F, 0x00])
        #expect(try decoded([0x1F, 0x00], prefixBits: 5) == (31, 2))
    }

    @Test("every value round-trips with every prefix", arguments: 1...8)
    func roundTrips(prefixBits: Int) throws {
        let values = Array(0...300) + [1337, 16_383, 16_384, 1 << 21, 1 << 28, HPACKInteger.maxValue]
        for value in values {
            let bytes = encoded(value, prefixBits: prefixBits)
            #expect(try decoded(bytes, prefixBits: prefixBits) == (value, bytes.count), "\(value)")
        }
    }

    @Test("a block ending inside an integer is an error, at every cut")
    func truncated() {
        let whole = encoded(HPACKInteger.maxValue, prefixBits: 5)
        for cut in 0..<whole.count {
            #expect(throws: HPACKError.integerTruncated) { try decoded(Array(whole[..<cut]), prefixBits: 5) }
        }
    }

    @Test("a value above 2^31 - 1 is an overflow, however it is spelled")
    func overflow() {
        let justOver = encoded(HPACKInteger.maxValue + 1, prefixBits: 5)
        #expect(throws: HPACKError.integerOverflow) { try decoded(justOver, prefixBits: 5) }
        let huge: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]
        #expect(throws: HPACKError.integerOverflow) { try decoded(huge, prefixBits: 8) }
        // Small value, padded with zero-valued continuation octets past what 2^31 needs.
        let padded: [UInt8] = [0x1F, 0x81, 0x80, 0x80, 0x80, 0x80, 0x00]
        #expect(throws: HPACKError.integerOverflow) { try decoded(padded, prefixBits: 5) }
    }
}
