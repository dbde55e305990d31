import Testing

@testable import WSProtocol

/// permessage-deflate's compression (RFC 7692 §7.2) over zlib.
@Suite struct PerMessageDeflateCodecTests {
    @Test("RFC 7692 §7.2.3.1 and §7.2.3.2: 'Hello' alone, and again with the context kept")
    func rfcExamples() throws {
        let hello = Array("Hello".utf8)
        #expect(Deflater().compress(hello) == [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])
        #expect(try Inflater().decompress([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00], limit: 100) == hello)
        let keeping = Deflater(resetsEachMessage: false)
        _ = keeping.compress(hello)
        #expect(keeping.compress(hello) == [0xF2, 0x00, 0x11, 0x00, 0x00])
        let inflater = Inflater(resetsEachMessage: false)
        #expect(try inflater.decompress([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00], limit: 100) == hello)
        #expect(try inflater.decompress([0xF2, 0x00, 0x11, 0x00, 0x00], limit: 100) == hello)
        // §7.2.3.3: a message in a stored (uncompressed) block.
        #expect(try Inflater().decompress([0x00, 0x05, 0x00, 0xFA, 0xFF, 0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x00], limit: 100) == hello)
    }

    @Test("round trips, each message alone: the same input always compresses to the same bytes")
    func roundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        let deflater = Deflater(), inflater = Inflater()
        for size in [0, 1, 100, 70_000, 300_000] {
            let message = (0..<size).map { i in UInt8(ascii: "a") + UInt8(truncatingIfNeeded: (i / 7) % 26) ^ (UInt8.random(in: 0...1, using: &generator)) }
            let compressed = deflater.compress(message)
            #expect(try inflater.decompress(compressed, limit: 1 << 20) == message)
            #expect(deflater.compress(message) == compressed)  // no context carried over
        }
    }

    @Test("a deflate bomb stops at the limit (1009), corrupt data is an error")
    func limits() throws {
        let bomb = Deflater().compress([UInt8](repeating: 0, count: 16 << 20))
        #expect(bomb.count < 20_000)
        #expect(throws: Inflater.Failure.tooBig(limit: 1 << 20)) { try Inflater().decompress(bomb, limit: 1 << 20) }
        #expect(throws: Inflater.Failure.self) { try Inflater().decompress([0xFF, 0xFF, 0xFF, 0xFF], limit: 100) }
        // The inflater is usable after a refusal (it resets after every message).
        let inflater = Inflater()
        _ = try? inflater.decompress(bomb, limit: 1000)
        #expect(try inflater.decompress([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00], limit: 100) == Array("Hello".utf8))
    }
}
