import Testing

@testable import WSProtocol

/// Compressed messages through `MessageReader` (RFC 7692 §6): RSV1 on the first frame, the
/// payload inflated as a whole, limits and UTF-8 checked on what it inflates to.
@Suite struct PerMessageDeflateReaderTests {
    let json = Array(String(repeating: #"{"type":"text","id":"title","props":{"text":"Hello"}},"#, count: 40).utf8)

    /// A masked client frame with RSV1 (or not) around an already compressed payload.
    func compressedFrame(
        _ opcode: Opcode, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = FrameHeader.compressedBit
    ) -> [UInt8] {
        var out: [UInt8] = []
        payload.withUnsafeBytes {
            FrameEncoder.appendFrame(
                opcode: opcode, fin: fin, rsv: rsv, payload: $0, maskingKey: MaskingKey(1, 2, 3, 4), to: &out)
        }
        return out
    }

    @Test("a compressed text message in one frame, and split at every byte")
    func wholeAndSplit() throws {
        let frame = compressedFrame(.text, Deflater().compress(json))
        var reader = CollectingReader(inflater: Inflater())
        #expect(try reader.feed(frame) == [.text(String(decoding: json, as: UTF8.self))])
        var bytewise = CollectingReader(inflater: Inflater())
        var outputs: [CollectingReader.Output] = []
        for byte in frame { outputs += try bytewise.feed([byte]) }
        #expect(outputs == [.text(String(decoding: json, as: UTF8.self))])
    }

    @Test("a compressed message in fragments (RSV1 on the first only), with a ping between them")
    func fragmented() throws {
        let compressed = Deflater().compress(json)
        let third = compressed.count / 3
        var bytes = compressedFrame(.binary, Array(compressed[..<third]), fin: false)
        bytes += clientFrame(.ping, [7])
        bytes += compressedFrame(.continuation, Array(compressed[third..<(2 * third)]), fin: false, rsv: 0)
        bytes += compressedFrame(.continuation, Array(compressed[(2 * third)...]), rsv: 0)
        bytes += clientFrame(.text, Array("plain".utf8))  // uncompressed messages stay allowed
        var reader = CollectingReader(inflater: Inflater())
        #expect(try reader.feed(bytes) == [.ping([7]), .binary(json), .text("plain")])
    }

    @Test("RSV1 on a continuation or a control frame is 1002; without the extension it is 1002 too")
    func misplacedBit() {
        let compressed = Deflater().compress(json)
        var reader = CollectingReader(inflater: Inflater())
        let continuation = compressedFrame(.text, compressed, fin: false) + compressedFrame(.continuation, [0])
        #expect(throws: ProtocolError.compressedBitMisplaced(.continuation)) { try reader.feed(continuation) }
        var control = CollectingReader(inflater: Inflater())
        #expect(throws: ProtocolError.compressedBitMisplaced(.ping)) { try control.feed(compressedFrame(.ping, [])) }
        var plain = CollectingReader()
        #expect(throws: ProtocolError.reservedBitsSet(4)) { try plain.feed(compressedFrame(.text, compressed)) }
        #expect(ProtocolError.compressedBitMisplaced(.ping).closeCode == .protocolError)
    }

    @Test("a deflate bomb is refused at the message limit (1009); corrupt data and bad UTF-8 are 1007")
    func limitsAndValidity() {
        let limits = ProtocolLimits(maxFrameBytes: 64 << 10, maxMessageBytes: 64 << 10, maxFragments: 16)
        let bomb = Deflater().compress([UInt8](repeating: 0x20, count: 8 << 20))
        #expect(bomb.count < 64 << 10)
        var reader = CollectingReader(limits: limits, inflater: Inflater())
        #expect(throws: ProtocolError.inflatedMessageTooBig(limit: 64 << 10)) {
            try reader.feed(compressedFrame(.text, bomb))
        }
        #expect(ProtocolError.inflatedMessageTooBig(limit: 1).closeCode == .messageTooBig)
        var corrupt = CollectingReader(inflater: Inflater())
        #expect(throws: ProtocolError.self) { try corrupt.feed(compressedFrame(.binary, [0xFF, 0xFF, 0xFF])) }
        #expect(ProtocolError.invalidCompressedData("x").closeCode == .invalidPayload)
        var badText = CollectingReader(inflater: Inflater())
        #expect(throws: ProtocolError.invalidUTF8(byteOffset: 2)) {
            try badText.feed(compressedFrame(.text, Deflater().compress([0x61, 0x62, 0xFF, 0x63])))
        }
    }

    @Test("a message just at the limit inflates; one byte more does not")
    func exactLimit() throws {
        let limits = ProtocolLimits(maxFrameBytes: 1000, maxMessageBytes: 1000, maxFragments: 16)
        var reader = CollectingReader(limits: limits, inflater: Inflater())
        let fits = [UInt8](repeating: 0x41, count: 1000)
        #expect(try reader.feed(compressedFrame(.binary, Deflater().compress(fits))) == [.binary(fits)])
        #expect(throws: ProtocolError.inflatedMessageTooBig(limit: 1000)) {
            try reader.feed(compressedFrame(.binary, Deflater().compress(fits + [0x41])))
        }
    }

    @Test("a server's shared frame deflates once and reads back through a client-role reader")
    func deflatedFrame() throws {
        var plain: [UInt8] = []
        FrameEncoder.appendFrame(opcode: .text, payload: json, to: &plain)
        let deflater = Deflater()
        let compressed = try #require(DeflatedFrame.make(from: plain, with: deflater, minimumBytes: 64))
        #expect(compressed.count < plain.count / 4)
        #expect(compressed[0] == 0x80 | 0x40 | Opcode.text.rawValue)
        #expect(DeflatedFrame.make(from: plain, with: deflater, minimumBytes: 64) == compressed)  // the same bytes again
        var reader = CollectingReader(role: .client, inflater: Inflater(resetsEachMessage: false))
        #expect(try reader.feed(compressed + compressed) == [.text(String(decoding: json, as: UTF8.self)), .text(String(decoding: json, as: UTF8.self))])
        // Too small, or a control frame: sent as they are.
        var small: [UInt8] = []
        FrameEncoder.appendFrame(opcode: .text, payload: Array("hi".utf8), to: &small)
        #expect(DeflatedFrame.make(from: small, with: deflater, minimumBytes: 64) == nil)
        #expect(DeflatedFrame.make(from: small, with: deflater, minimumBytes: 0) == nil)  // deflate would not shrink it
        var ping: [UInt8] = []
        FrameEncoder.appendFrame(opcode: .ping, payload: json.prefix(100).map { $0 }, to: &ping)
        #expect(DeflatedFrame.make(from: ping, with: deflater, minimumBytes: 0) == nil)
    }
}
