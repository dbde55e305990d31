import Testing

@testable import WSProtocol

/// RFC 6455 §5.7 examples and the decoder's rules, each checked at every split point.
@Suite struct FrameDecoderTests {
    // §5.7: a single-frame unmasked text message "Hello".
    static let unmaskedHello: [UInt8] = [
        0x81, 0x05,  // FIN + text, length 5
        0x48, 0x65, 0x6c, 0x6c, 0x6f,
    ]  // "Hello"
    // §5.7: a single-frame masked text message "Hello".
    static let maskedHello: [UInt8] = [
        0x81, 0x85,  // FIN + text, MASK + length 5
        0x37, 0xfa, 0x21, 0x3d,  // masking key
        0x7f, 0x9f, 0x4d, 0x51, 0x58,
    ]
    // §5.7: a fragmented unmasked text message: "Hel" then "lo".
    static let fragmentedHello: [UInt8] = [
        0x01, 0x03, 0x48, 0x65, 0x6c,  // text, not FIN, "Hel"
        0x80, 0x02, 0x6c, 0x6f,
    ]  // FIN + continuation, "lo"
    // §5.7: unmasked ping "Hello", and the masked pong answering it.
    static let unmaskedPing: [UInt8] = [0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]
    static let maskedPong: [UInt8] = [0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]
    // §5.7: 256 bytes binary message in a single unmasked frame (16-bit length).
    static let binary256: [UInt8] = [0x82, 0x7E, 0x01, 0x00] + [UInt8](repeating: 0xAB, count: 256)
    // §5.7: 64 KiB binary message in a single unmasked frame (64-bit length).
    static let binary64K: [UInt8] = [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0] + [UInt8](repeating: 0xCD, count: 65536)

    @Test("§5.7 masked 'Hello' decodes the same at every split", arguments: 0...maskedHello.count)
    func maskedHelloAtEverySplit(_ split: Int) throws {
        let result = CollectingReader.outputs(Self.maskedHello, split: split)
        #expect(try result.get() == [.text("Hello")])
    }

    @Test("§5.7 unmasked 'Hello' is what a client reads, at every split", arguments: 0...unmaskedHello.count)
    func unmaskedHelloAtEverySplit(_ split: Int) throws {
        #expect(try CollectingReader.outputs(Self.unmaskedHello, split: split, role: .client).get() == [.text("Hello")])
    }

    @Test("§5.7 fragmented 'Hel' + 'lo' is one message, at every split", arguments: 0...fragmentedHello.count)
    func fragmentedAtEverySplit(_ split: Int) throws {
        #expect(
            try CollectingReader.outputs(Self.fragmentedHello, split: split, role: .client).get() == [.text("Hello")])
    }

    @Test("§5.7 ping and masked pong carry their payloads")
    func pingAndPong() throws {
        #expect(
            try CollectingReader.outputsBytewise(Self.unmaskedPing, role: .client).get() == [.ping(Array("Hello".utf8))]
        )
        #expect(try CollectingReader.outputsBytewise(Self.maskedPong).get() == [.pong(Array("Hello".utf8))])
    }

    @Test("§5.7 16-bit and 64-bit lengths decode, byte by byte too")
    func extendedLengths() throws {
        #expect(
            try CollectingReader.outputsBytewise(Self.binary256, role: .client).get() == [
                .binary([UInt8](repeating: 0xAB, count: 256))
            ])
        #expect(
            try CollectingReader.outputs(Self.binary64K, split: 7, role: .client).get()
                == [.binary([UInt8](repeating: 0xCD, count: 65536))])
    }

    @Test("a ping between two fragments is delivered in between, at every split")
    func interleavedControlFrame() throws {
        let bytes =
            clientFrame(.text, Array("frag".utf8), fin: false) + clientFrame(.ping, [1, 2])
            + clientFrame(.continuation, Array("ment".utf8))
        for split in 0...bytes.count {
            #expect(try CollectingReader.outputs(bytes, split: split).get() == [.ping([1, 2]), .text("fragment")])
        }
    }

    @Test("an unmasked client frame is a protocol error (1002)")
    func unmaskedClientFrame() {
        let result = CollectingReader.outputs(Self.unmaskedHello, split: 1)
        #expect(result == .failure(.unmaskedClientFrame))
        #expect(ProtocolError.unmaskedClientFrame.closeCode == .protocolError)
    }

    @Test("a masked server frame is refused by a client")
    func maskedServerFrame() {
        #expect(CollectingReader.outputs(Self.maskedHello, split: 3, role: .client) == .failure(.maskedServerFrame))
    }

    @Test("reserved bits, reserved opcodes and fragmented or long control frames are 1002")
    func frameRules() {
        var rsv = clientFrame(.text, [0x41])
        rsv[0] |= 0x40
        #expect(CollectingReader.outputsBytewise(rsv) == .failure(.reservedBitsSet(0b100)))
        var reserved = clientFrame(.text, [0x41])
        reserved[0] = 0x83
        #expect(CollectingReader.outputsBytewise(reserved) == .failure(.reservedOpcode(3)))
        #expect(
            CollectingReader.outputsBytewise(clientFrame(.ping, [1], fin: false))
                == .failure(.fragmentedControlFrame(.ping)))
        #expect(
            CollectingReader.outputsBytewise(clientFrame(.ping, [UInt8](repeating: 0, count: 126)))
                == .failure(.controlFrameTooLong(.ping, length: 126)))
        #expect(ProtocolError.reservedOpcode(3).closeCode.rawValue == 1002)
    }

    @Test("a 16-bit length below 126 is not minimal and refused")
    func nonMinimalLength() {
        let frame: [UInt8] = [0x82, 0xFE, 0x00, 0x05, 1, 2, 3, 4, 0, 0, 0, 0, 0]  // length 5 encoded in 16 bits
        #expect(CollectingReader.outputs(frame, split: 4) == .failure(.nonMinimalLength(5)))
    }

    @Test("continuation without a message, and a new message inside a fragmented one, are 1002")
    func fragmentationOrder() {
        #expect(CollectingReader.outputsBytewise(clientFrame(.continuation, [1])) == .failure(.unexpectedContinuation))
        let bytes = clientFrame(.text, [0x41], fin: false) + clientFrame(.text, [0x42])
        #expect(CollectingReader.outputsBytewise(bytes) == .failure(.expectedContinuation(.text)))
    }

    @Test("size limits close with 1009 as soon as the header announces too much")
    func limits() {
        let limits = ProtocolLimits(maxFrameBytes: 10, maxMessageBytes: 10, maxFragments: 2)
        let header = Array(clientFrame(.binary, [UInt8](repeating: 0, count: 11)).prefix(6))  // header only
        #expect(
            CollectingReader.outputs(header, split: 6, limits: limits) == .failure(.frameTooBig(length: 11, limit: 10)))
        let twoFrames =
            clientFrame(.binary, [UInt8](repeating: 0, count: 6), fin: false)
            + clientFrame(.continuation, [0, 0, 0, 0, 0])
        #expect(
            CollectingReader.outputs(twoFrames, split: 0, limits: limits)
                == .failure(.messageTooBig(length: 11, limit: 10)))
        let fourFrames =
            clientFrame(.binary, [1], fin: false) + clientFrame(.continuation, [2], fin: false)
            + clientFrame(.continuation, [3], fin: false) + clientFrame(.continuation, [4])
        #expect(CollectingReader.outputs(fourFrames, split: 0, limits: limits) == .failure(.tooManyFragments(limit: 2)))
        #expect(ProtocolError.messageTooBig(length: 11, limit: 10).closeCode == .messageTooBig)
    }

    @Test("after an error the reader keeps failing with it")
    func failureIsSticky() {
        var reader = CollectingReader()
        #expect(throws: ProtocolError.unexpectedContinuation) { try reader.feed(clientFrame(.continuation, [1])) }
        #expect(throws: ProtocolError.unexpectedContinuation) { try reader.feed(clientFrame(.text, [0x41])) }
    }

    @Test("a close frame yields its code and reason; bad ones are refused")
    func closeFrames() throws {
        let close = clientFrame(.close, [0x03, 0xE8] + Array("bye".utf8))
        #expect(
            try CollectingReader.outputsBytewise(close).get() == [.close(ClosePayload(code: .normal, reason: "bye"))])
        #expect(
            try CollectingReader.outputsBytewise(clientFrame(.close, [])).get() == [.close(ClosePayload(code: nil))])
        #expect(CollectingReader.outputsBytewise(clientFrame(.close, [0x03])) == .failure(.closePayloadOfOneByte))
        #expect(
            CollectingReader.outputsBytewise(clientFrame(.close, [0x03, 0xED])) == .failure(.invalidCloseCode(1005)))
        #expect(
            CollectingReader.outputsBytewise(clientFrame(.close, [0x03, 0xE8, 0xFF]))
                == .failure(.invalidUTF8(byteOffset: 0)))
    }
}
