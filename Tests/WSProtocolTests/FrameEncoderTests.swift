import Testing

@testable import WSProtocol

@Suite struct FrameEncoderTests {
    @Test("server frames match §5.7 byte for byte")
    func serverGolden() {
        var out: [UInt8] = []
        FrameEncoder.appendFrame(opcode: .text, payload: Array("Hello".utf8), to: &out)
        #expect(out == FrameDecoderTests.unmaskedHello)
        out = []
        FrameEncoder.appendFrame(opcode: .binary, payload: [UInt8](repeating: 0xAB, count: 256), to: &out)
        #expect(out == FrameDecoderTests.binary256)
        out = []
        FrameEncoder.appendFrame(opcode: .binary, payload: [UInt8](repeating: 0xCD, count: 65536), to: &out)
        #expect(out == FrameDecoderTests.binary64K)
    }

    @Test("a client frame with the §5.7 key matches the masked 'Hello'")
    func clientGolden() {
        #expect(clientFrame(.text, Array("Hello".utf8)) == FrameDecoderTests.maskedHello)
    }

    @Test("encode then decode round-trips every length class")
    func roundTrip() throws {
        for length in [0, 1, 125, 126, 127, 65535, 65536, 70000] {
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            #expect(
                try CollectingReader.outputs(clientFrame(.binary, payload, key: .random()), split: length / 2).get()
                    == [.binary(payload)])
            #expect(
                FrameHeader(opcode: .binary, payloadLength: UInt64(length)).encodedSize
                    == (length < 126 ? 2 : length <= 65535 ? 4 : 10))
        }
    }
}
