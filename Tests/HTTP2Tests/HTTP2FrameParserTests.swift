import Testing

@testable import HTTP2

/// The frame parser (RFC 9113 §4.1, §6): every frame type, written by hand as octets, parsed at
/// every split point; each type's length, stream and flag rules; what it ignores.
@Suite struct HTTP2FrameParserTests {
    /// One frame of every type a server may send, as octets, with what it parses to.
    static let stream: [([UInt8], HTTP2Frame)] = [
        (
            [
                0x00, 0x00, 0x0c, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00,  // length 12, SETTINGS, no flags, stream 0
                0x00, 0x03, 0x00, 0x00, 0x00, 0x64,  // MAX_CONCURRENT_STREAMS = 100
                0x00, 0x04, 0x00, 0x01, 0x00, 0x00,  // INITIAL_WINDOW_SIZE = 65536
            ],
            HTTP2Frame(
                streamID: 0,
                .settings(
                    [HTTP2Setting(.maxConcurrentStreams, 100), HTTP2Setting(.initialWindowSize, 65536)], ack: false))
        ),
        (
            [0x00, 0x00, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00],  // SETTINGS, ACK
            HTTP2Frame(streamID: 0, .settings([], ack: true))
        ),
        (
            [
                0x00, 0x00, 0x04, 0x01, 0x04, 0x00, 0x00, 0x00, 0x01,  // length 4, HEADERS, END_HEADERS, stream 1
                0x88, 0x0f, 0x10, 0x00,  // a field block (opaque to the parser)
            ],
            HTTP2Frame(streamID: 1, .headers(fragment: [0x88, 0x0f, 0x10, 0x00], endStream: false, endHeaders: true))
        ),
        (
            [
                0x00, 0x00, 0x0a, 0x01, 0x2d, 0x00, 0x00, 0x00, 0x03,  // HEADERS, PRIORITY|PADDED|END_*, 3
                0x02,  // pad length 2
                0x80, 0x00, 0x00, 0x01, 0x0f,  // exclusive, depends on 1, weight 15
                0x88, 0x89,  // field block
                0x00, 0x00,  // padding
            ],
            HTTP2Frame(
                streamID: 3,
                .headers(
                    fragment: [0x88, 0x89], endStream: true, endHeaders: true,
                    priority: HTTP2Priority(exclusive: true, dependency: 1, weight: 15), padding: 3))
        ),
        (
            [0x00, 0x00, 0x02, 0x09, 0x04, 0x00, 0x00, 0x00, 0x03, 0x41, 0x42],  // CONTINUATION, END_HEADERS, stream 3
            HTTP2Frame(streamID: 3, .continuation(fragment: [0x41, 0x42], endHeaders: true))
        ),
        (
            [0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x68, 0x65, 0x6c, 0x6c, 0x6f],  // DATA 1 "hello"
            HTTP2Frame(streamID: 1, .data(Array("hello".utf8), endStream: false))
        ),
        (
            [
                0x00, 0x00, 0x06, 0x00, 0x09, 0x00, 0x00, 0x00, 0x01,  // length 6, DATA, PADDED|END_STREAM, stream 1
                0x03, 0x68, 0x69,  // pad length 3, "hi"
                0x00, 0x00, 0x00,  // padding
            ],
            HTTP2Frame(streamID: 1, .data(Array("hi".utf8), endStream: true, padding: 4))
        ),
        (
            [0x00, 0x00, 0x05, 0x02, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x03, 0xff],  // PRIORITY stream 5
            HTTP2Frame(streamID: 5, .priority(HTTP2Priority(exclusive: false, dependency: 3, weight: 255)))
        ),
        (
            [0x00, 0x00, 0x04, 0x03, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x07],  // RST_STREAM 5 REFUSED
            HTTP2Frame(streamID: 5, .rstStream(.refusedStream))
        ),
        (
            [
                0x00, 0x00, 0x08, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00,  // PING, stream 0
                0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
            ],
            HTTP2Frame(streamID: 0, .ping(opaque: 0x0102_0304_0506_0708, ack: false))
        ),
        (
            [
                0x00, 0x00, 0x04, 0x08, 0x00, 0x80, 0x00, 0x00, 0x01,  // WINDOW_UPDATE, stream 1, reserved bit set
                0x80, 0x00, 0x10, 0x00,  // increment 4096 with the reserved bit set
            ],
            HTTP2Frame(streamID: 1, .windowUpdate(increment: 4096))
        ),
        (
            [
                0x00, 0x00, 0x03, 0xfa, 0xff, 0x00, 0x00, 0x00, 0x01,  // type 0xfa (unknown), all flags, stream 1
                0x01, 0x02, 0x03,
            ],
            HTTP2Frame(streamID: 1, .unknown(type: 0xfa, flags: 0xff, length: 3))
        ),
        (
            [
                0x00, 0x00, 0x0a, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00,  // GOAWAY, stream 0
                0x80, 0x00, 0x00, 0x03,  // last stream 3 (reserved bit set)
                0x00, 0x00, 0x00, 0x00,  // NO_ERROR
                0x62, 0x79,  // debug data "by"
            ],
            HTTP2Frame(streamID: 0, .goAway(lastStreamID: 3, error: .noError, debugData: Array("by".utf8)))
        ),
    ]

    static let octets = stream.flatMap(\.0)
    static let frames = stream.map(\.1)

    /// Every frame `bytes` holds, fed in the given cuts.
    static func parse(_ chunks: [ArraySlice<UInt8>], maxFrameSize: Int = 16_384) throws(HTTP2ProtocolError)
        -> [HTTP2Frame]
    {
        var parser = HTTP2FrameParser(maxFrameSize: maxFrameSize)
        var frames: [HTTP2Frame] = []
        for chunk in chunks {
            parser.append(chunk)
            while let frame = try parser.next() { frames.append(frame) }
        }
        #expect(parser.bufferedCount == 0)
        return frames
    }

    static func parseOne(_ bytes: [UInt8]) throws(HTTP2ProtocolError) -> HTTP2Frame? {
        var parser = HTTP2FrameParser()
        parser.append(bytes)
        return try parser.next()
    }

    @Test("a stream of every frame type parses the same at every split point", arguments: 0...octets.count)
    func everySplit(_ split: Int) throws {
        #expect(try Self.parse([Self.octets[..<split], Self.octets[split...]]) == Self.frames)
    }

    @Test("a stream of every frame type parses the same fed one octet at a time")
    func oneOctetAtATime() throws {
        #expect(try Self.parse(Self.octets.indices.map { Self.octets[$0...$0] }) == Self.frames)
    }

    @Test("the writer writes each frame back to the octets it came from (reserved bits cleared)")
    func writerRoundTrips() throws {
        for (bytes, frame) in Self.stream {
            var written: [UInt8] = []
            HTTP2FrameWriter.write(frame, into: &written)
            var expected = bytes
            if case .windowUpdate = frame.payload {
                expected[5] &= 0x7f
                expected[9] &= 0x7f
            }
            if case .goAway = frame.payload { expected[9] &= 0x7f }
            if case .unknown = frame.payload { expected.replaceSubrange(9..., with: [0, 0, 0]) }
            #expect(written == expected, "\(frame)")
            #expect(try Self.parseOne(written) == frame)
        }
    }

    @Test("a frame longer than SETTINGS_MAX_FRAME_SIZE is refused from its header alone (FRAME_SIZE_ERROR)")
    func frameTooLarge() {
        let header: [UInt8] = [0x00, 0x40, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01]  // DATA of 16,385 octets
        #expect(throws: HTTP2ProtocolError.frameTooLarge(type: 0, length: 16_385, limit: 16_384)) {
            try Self.parseOne(header)
        }
        #expect(HTTP2ProtocolError.frameTooLarge(type: 0, length: 16_385, limit: 16_384).code == .frameSizeError)
        // A larger limit takes it.
        let frame = header + [UInt8](repeating: 7, count: 16_385)
        #expect(throws: Never.self) { try Self.parse([frame[...]], maxFrameSize: 1 << 20) }
    }

    /// A frame header: 24-bit length, type, flags, stream.
    static func header(_ length: Int, _ type: UInt8, flags: UInt8 = 0, stream: UInt32) -> [UInt8] {
        [
            UInt8(length >> 16), UInt8(length >> 8 & 0xff), UInt8(length & 0xff), type, flags,
            UInt8(stream >> 24), UInt8(stream >> 16 & 0xff), UInt8(stream >> 8 & 0xff), UInt8(stream & 0xff),
        ]
    }

    static let badFrames: [(String, [UInt8], HTTP2ProtocolError)] = [
        ("DATA on stream 0", header(1, 0x0, stream: 0) + [0], .missingStreamID(.data)),
        ("HEADERS on stream 0", header(1, 0x1, stream: 0) + [0], .missingStreamID(.headers)),
        ("PRIORITY on stream 0", header(5, 0x2, stream: 0) + [0, 0, 0, 1, 0], .missingStreamID(.priority)),
        ("RST_STREAM on stream 0", header(4, 0x3, stream: 0) + [0, 0, 0, 0], .missingStreamID(.rstStream)),
        ("PUSH_PROMISE on stream 0", header(4, 0x5, stream: 0) + [0, 0, 0, 2], .missingStreamID(.pushPromise)),
        ("CONTINUATION on stream 0", header(0, 0x9, stream: 0), .missingStreamID(.continuation)),
        ("SETTINGS on stream 1", header(0, 0x4, stream: 1), .unexpectedStreamID(.settings, streamID: 1)),
        (
            "PING on stream 1", header(8, 0x6, stream: 1) + [UInt8](repeating: 0, count: 8),
            .unexpectedStreamID(.ping, streamID: 1)
        ),
        (
            "GOAWAY on stream 1", header(8, 0x7, stream: 1) + [UInt8](repeating: 0, count: 8),
            .unexpectedStreamID(.goAway, streamID: 1)
        ),
        ("PRIORITY of 4 octets", header(4, 0x2, stream: 1) + [0, 0, 0, 0], .badFrameLength(.priority, length: 4)),
        (
            "RST_STREAM of 5 octets", header(5, 0x3, stream: 1) + [0, 0, 0, 0, 0],
            .badFrameLength(.rstStream, length: 5)
        ),
        ("SETTINGS of 5 octets", header(5, 0x4, stream: 0) + [0, 1, 0, 0, 0], .badFrameLength(.settings, length: 5)),
        (
            "SETTINGS ACK with a payload", header(6, 0x4, flags: 1, stream: 0) + [0, 1, 0, 0, 0, 0],
            .badFrameLength(.settings, length: 6)
        ),
        (
            "PING of 7 octets", header(7, 0x6, stream: 0) + [UInt8](repeating: 0, count: 7),
            .badFrameLength(.ping, length: 7)
        ),
        (
            "GOAWAY of 7 octets", header(7, 0x7, stream: 0) + [UInt8](repeating: 0, count: 7),
            .badFrameLength(.goAway, length: 7)
        ),
        (
            "WINDOW_UPDATE of 3 octets", header(3, 0x8, stream: 0) + [0, 0, 1],
            .badFrameLength(.windowUpdate, length: 3)
        ),
        ("PUSH_PROMISE of 3 octets", header(3, 0x5, stream: 1) + [0, 0, 2], .badFrameLength(.pushPromise, length: 3)),
        (
            "HEADERS with PRIORITY but 4 octets", header(4, 0x1, flags: 0x24, stream: 1) + [0, 0, 0, 0],
            .badFrameLength(.headers, length: 4)
        ),
        ("PADDED DATA of 0 octets", header(0, 0x0, flags: 0x8, stream: 1), .badFrameLength(.data, length: 0)),
        (
            "DATA padded by its whole length", header(3, 0x0, flags: 0x8, stream: 1) + [3, 0, 0],
            .paddingTooLong(.data, padLength: 3, length: 3)
        ),
        (
            "HEADERS padded past its end", header(2, 0x1, flags: 0xc, stream: 1) + [5, 0],
            .paddingTooLong(.headers, padLength: 5, length: 2)
        ),
    ]

    @Test("each frame type's stream and length rules", arguments: badFrames.indices)
    func badFrame(_ index: Int) {
        let (name, bytes, error) = Self.badFrames[index]
        #expect(throws: error, "\(name)") { try Self.parseOne(bytes) }
    }

    @Test("the codes: a wrong length is FRAME_SIZE_ERROR, a wrong stream or padding PROTOCOL_ERROR")
    func codes() {
        #expect(HTTP2ProtocolError.badFrameLength(.ping, length: 7).code == .frameSizeError)
        #expect(HTTP2ProtocolError.missingStreamID(.data).code == .protocolError)
        #expect(HTTP2ProtocolError.paddingTooLong(.data, padLength: 3, length: 3).code == .protocolError)
        #expect(HTTP2ProtocolError.badSettingValue(HTTP2Setting(.initialWindowSize, 1 << 31)).code == .flowControlError)
        #expect(HTTP2ProtocolError.badSettingValue(HTTP2Setting(.enablePush, 2)).code == .protocolError)
    }

    @Test("flags a type does not define are ignored; an unknown type's payload is skipped")
    func undefinedFlags() throws {
        let ping = Self.header(8, 0x6, flags: 0xfe, stream: 0) + [UInt8](repeating: 1, count: 8)
        #expect(try Self.parseOne(ping) == HTTP2Frame(streamID: 0, .ping(opaque: 0x0101_0101_0101_0101, ack: false)))
        let unknown = Self.header(2, 0x20, stream: 0) + [9, 9] + Self.header(0, 0x4, flags: 1, stream: 0)
        #expect(
            try Self.parse([unknown[...]]) == [
                HTTP2Frame(streamID: 0, .unknown(type: 0x20, flags: 0, length: 2)),
                HTTP2Frame(streamID: 0, .settings([], ack: true)),
            ])
    }

    @Test("a frame waits for its last octet; nothing is returned early")
    func waitsForWholeFrame() throws {
        var parser = HTTP2FrameParser()
        let ping = Self.header(8, 0x6, stream: 0) + [UInt8](repeating: 0, count: 8)
        parser.append(ping.dropLast())
        #expect(try parser.next() == nil)
        #expect(parser.bufferedCount == 16)
        parser.append(ping.suffix(1))
        #expect(try parser.next() == HTTP2Frame(streamID: 0, .ping(opaque: 0, ack: false)))
        #expect(try parser.next() == nil)
    }

    @Test("a field block is split into HEADERS and CONTINUATION at the frame size, END_STREAM on HEADERS")
    func fieldBlockSplit() throws {
        let block = (0..<40).map { UInt8($0) }
        var out: [UInt8] = []
        HTTP2FrameWriter.writeFieldBlock(block, streamID: 7, endStream: true, maxFrameSize: 16, into: &out)
        #expect(
            try Self.parse([out[...]]) == [
                HTTP2Frame(streamID: 7, .headers(fragment: Array(block[0..<16]), endStream: true, endHeaders: false)),
                HTTP2Frame(streamID: 7, .continuation(fragment: Array(block[16..<32]), endHeaders: false)),
                HTTP2Frame(streamID: 7, .continuation(fragment: Array(block[32..<40]), endHeaders: true)),
            ])
    }

    @Test("SETTINGS values out of range are refused; unknown identifiers ignored")
    func settingsRanges() throws {
        var settings = HTTP2Settings()
        #expect(throws: HTTP2ProtocolError.badSettingValue(HTTP2Setting(.enablePush, 2))) {
            try settings.apply(HTTP2Setting(.enablePush, 2))
        }
        #expect(throws: HTTP2ProtocolError.badSettingValue(HTTP2Setting(.initialWindowSize, 1 << 31))) {
            try settings.apply(HTTP2Setting(.initialWindowSize, 1 << 31))
        }
        #expect(throws: HTTP2ProtocolError.badSettingValue(HTTP2Setting(.maxFrameSize, 16_383))) {
            try settings.apply(HTTP2Setting(.maxFrameSize, 16_383))
        }
        #expect(throws: HTTP2ProtocolError.badSettingValue(HTTP2Setting(.maxFrameSize, 1 << 24))) {
            try settings.apply(HTTP2Setting(.maxFrameSize, 1 << 24))
        }
        try settings.apply(HTTP2Setting(.maxFrameSize, (1 << 24) - 1))
        try settings.apply(HTTP2Setting(.initialWindowSize, (1 << 31) - 1))
        try settings.apply(HTTP2Setting(HTTP2Setting.Identifier(rawValue: 0x99), 12345))
        #expect(settings.maxFrameSize == (1 << 24) - 1 && settings.initialWindowSize == Int(Int32.max))
    }
}
