import WSProtocol

/// The frame decoder, message assembler and UTF-8 validator (RFC 6455 §5, §8.1) on any byte
/// stream, as a server (masked frames) or a client (unmasked).
///
/// Input: a settings byte (bit 0: client role; bit 1: small limits, so the frame, message and
/// fragment limits are reachable; bit 2: permessage-deflate agreed, so RSV1 marks a compressed
/// message that an inflater reads — reset after each message as a server's is, kept as a
/// client's is; bit 3: drop the reader whenever it is idle, as `Connection` does on
/// /v1/connect), a chunk-plan seed byte, then the stream.
///
/// Properties:
/// - the messages, control frames and error are the same whether the stream arrives in one
///   read or in the chunks of the plan;
/// - `.needMoreBytes` means every byte of the read was consumed (`Connection` reuses its
///   read buffer after it);
/// - a text message and a close reason are valid UTF-8 by the standard library's own check;
/// - no message, inflated ones included, is larger than the message limit;
/// - what was decoded, encoded again by `FrameEncoder` (masked as the peer would), decodes to
///   the same events;
/// - `UTF8Validator` agrees with the standard library on the whole stream, however it is cut.
enum WebSocketFuzz {
    /// What a reader produced, with payloads copied out of the buffers they lived in.
    enum Event: Equatable {
        case message(Opcode, [UInt8])
        case ping([UInt8])
        case pong([UInt8])
        case close(ClosePayload)
    }

    struct Outcome: Equatable {
        var events: [Event] = []
        var failure: ProtocolError?
    }

    /// Limits small enough that a 4 KiB input reaches each of them.
    static let smallLimits = ProtocolLimits(maxFrameBytes: 125, maxMessageBytes: 1000, maxFragments: 8)

    static func run(_ data: UnsafeRawBufferPointer) throws(PropertyViolation) {
        var input = FuzzInput(data)
        let settings = input.byte()
        let role: FrameDecoder.Role = settings & 1 == 0 ? .server : .client
        let limits = settings & 2 == 0 ? ProtocolLimits.default : smallLimits
        let compressed = settings & 4 != 0
        let dropsIdleReader = settings & 8 != 0
        let plan = ChunkPlan(seed: input.byte())
        let stream = input.rest()

        let whole = try decode(
            stream, chunks: stream.isEmpty ? [] : [0..<stream.count], role: role, limits: limits,
            compressed: compressed, dropsIdleReader: false)
        let chunked = try decode(
            stream, chunks: plan.chunks(of: stream.count), role: role, limits: limits,
            compressed: compressed, dropsIdleReader: dropsIdleReader)
        try check(whole == chunked, "one read gave \(whole), chunks gave \(chunked)")

        for event in whole.events {
            switch event {
            case .message(let opcode, let bytes):
                try check(bytes.count <= limits.maxMessageBytes, "a \(bytes.count)-byte message passed the limit")
                try check(
                    opcode != .text || String(validating: bytes, as: UTF8.self) != nil,
                    "a text message is not UTF-8: \(bytes)")
            case .close(let close):
                try check(
                    close.code == nil || close.code!.isValidOnWire, "close code \(String(describing: close.code))")
            default: break
            }
        }

        let again = try decode(
            encode(whole.events, role: role, limits: limits), chunks: nil, role: role, limits: limits,
            compressed: false, dropsIdleReader: false)
        try check(
            again == Outcome(events: whole.events), "re-encoded events \(whole.events) decoded as \(again)")

        try checkValidator(stream, plan: plan)
    }

    /// Runs a `MessageReader` over `stream` read by read (`chunks` nil: one read).
    static func decode(
        _ stream: [UInt8], chunks: [Range<Int>]?, role: FrameDecoder.Role, limits: ProtocolLimits,
        compressed: Bool, dropsIdleReader: Bool
    ) throws(PropertyViolation) -> Outcome {
        func newReader() -> MessageReader { MessageReader(role: role, limits: limits, acceptsCompressed: compressed) }
        let inflater = compressed ? Inflater(resetsEachMessage: role == .server) : nil
        var reader = newReader()
        var outcome = Outcome()
        var copy = stream  // unmasked in place
        var violation: PropertyViolation?
        copy.withUnsafeMutableBytes { buffer in
            for chunk in chunks ?? (stream.isEmpty ? [] : [0..<stream.count]) {
                let read = UnsafeMutableRawBufferPointer(rebasing: buffer[chunk])
                var offset = 0
                do throws(ProtocolError) {
                    readLoop: while true {
                        let event = try reader.next(in: read, offset: &offset, inflater: inflater)
                        func bytes(_ payload: MessageAssembler.Payload) -> [UInt8] {
                            reader.withBytes(of: payload, input: read) { Array($0) }
                        }
                        switch event {
                        case .needMoreBytes:
                            if offset != read.count {
                                violation = PropertyViolation(
                                    description: "needMoreBytes after \(offset) of \(read.count) bytes")
                            }
                            break readLoop
                        case .message(let opcode, let payload): outcome.events.append(.message(opcode, bytes(payload)))
                        case .ping(let payload): outcome.events.append(.ping(bytes(payload)))
                        case .pong(let payload): outcome.events.append(.pong(bytes(payload)))
                        case .close(let close): outcome.events.append(.close(close))
                        }
                    }
                } catch {
                    outcome.failure = error
                    return
                }
                if violation != nil { return }
                if dropsIdleReader && reader.isIdle { reader = newReader() }
            }
        }
        if let violation { throw violation }
        return outcome
    }

    /// The frames a peer would send for `events`: masked when we are the server, messages cut
    /// into fragments no larger than the reader's frame limit.
    static func encode(_ events: [Event], role: FrameDecoder.Role, limits: ProtocolLimits) -> [UInt8] {
        let key: MaskingKey? = role == .server ? MaskingKey(0x37, 0xFA, 0x21, 0x3D) : nil
        let frameLimit = min(limits.maxFrameBytes, limits.maxMessageBytes)
        var out: [UInt8] = []
        for event in events {
            switch event {
            case .message(let opcode, let payload):
                var start = 0
                repeat {
                    let end = min(payload.count, start + frameLimit)
                    FrameEncoder.appendFrame(
                        opcode: start == 0 ? opcode : .continuation, fin: end == payload.count,
                        payload: Array(payload[start..<end]), maskingKey: key, to: &out)
                    start = end
                } while start < payload.count
            case .ping(let payload):
                FrameEncoder.appendFrame(opcode: .ping, payload: payload, maskingKey: key, to: &out)
            case .pong(let payload):
                FrameEncoder.appendFrame(opcode: .pong, payload: payload, maskingKey: key, to: &out)
            case .close(let close): FrameEncoder.appendClose(close, maskingKey: key, to: &out)
            }
        }
        return out
    }

    /// The validator, fed the stream in the plan's chunks, against the standard library.
    static func checkValidator(_ stream: [UInt8], plan: ChunkPlan) throws(PropertyViolation) {
        var validator = UTF8Validator()
        var isValid = true
        stream.withUnsafeBytes { bytes in
            for chunk in plan.chunks(of: bytes.count) where isValid {
                isValid = validator.validate(UnsafeRawBufferPointer(rebasing: bytes[chunk]))
            }
        }
        let expected = String(validating: stream, as: UTF8.self) != nil
        try check(
            (isValid && validator.isComplete) == expected,
            "UTF8Validator says \(isValid && validator.isComplete), the standard library \(expected) for \(stream)")
        if let offset = validator.invalidByteOffset {
            try check(!isValid && offset < stream.count, "invalid byte offset \(offset) of \(stream.count)")
        }
    }
}
