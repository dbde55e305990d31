/// A `FrameDecoder` and a `MessageAssembler` together: bytes in, whole messages and control
/// frames out. This is what a connection drives.
///
/// With `acceptsCompressed` (permessage-deflate agreed), RSV1 marks a compressed message, which
/// `next` inflates with the inflater it is given (a loop can share one among its connections when
/// the peer resets its context after every message, `client_no_context_takeover`).
///
/// Invariants: an event's `.input` payload points into the buffer passed to the same `next`
/// call and is valid until the caller reuses that buffer; after a `ProtocolError` the stream
/// cannot be parsed any further, so every later call throws that error again.
public struct MessageReader: Sendable {
    /// What `next` produced: need more input, or a message or control frame.
    public enum Event: Equatable, Sendable {
        case needMoreBytes
        case message(Opcode, MessageAssembler.Payload)
        case ping(MessageAssembler.Payload)
        case pong(MessageAssembler.Payload)
        case close(ClosePayload)
    }

    public var decoder: FrameDecoder
    public var assembler: MessageAssembler
    public private(set) var failure: ProtocolError?

    public init(role: FrameDecoder.Role, limits: ProtocolLimits, acceptsCompressed: Bool = false) {
        decoder = FrameDecoder(role: role, maxFrameBytes: min(limits.maxFrameBytes, limits.maxMessageBytes))
        if acceptsCompressed { decoder.allowedReservedBits = FrameHeader.compressedBit }
        assembler = MessageAssembler(limits: limits)
    }

    /// Whether RSV1 (a compressed message) is allowed.
    public var acceptsCompressed: Bool { decoder.allowedReservedBits & FrameHeader.compressedBit != 0 }

    /// Whether nothing of a frame or message is buffered (and no violation was seen): the reader
    /// may then be dropped and a new one made for the next bytes, so an idle connection does not
    /// carry one.
    public var isIdle: Bool { failure == nil && decoder.isAtFrameBoundary && assembler.isBetweenMessages }

    /// Decodes from `buffer[offset...]` until a message or control frame is complete or the
    /// input is used up. Unmasks in place.
    /// - Parameter inflater: inflates compressed messages; required with `acceptsCompressed`.
    public mutating func next(
        in buffer: UnsafeMutableRawBufferPointer, offset: inout Int, inflater: Inflater? = nil
    ) throws(ProtocolError) -> Event {
        precondition(inflater != nil || !acceptsCompressed, "a reader that accepts compression needs an inflater")
        if let failure { throw failure }
        do {
            return try decode(buffer, offset: &offset, inflater: inflater)
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func decode(_ buffer: UnsafeMutableRawBufferPointer, offset: inout Int, inflater: Inflater?)
        throws(ProtocolError) -> Event
    {
        while true {
            switch try decoder.next(in: buffer, offset: &offset) {
            case .needMoreBytes:
                return .needMoreBytes
            case .header(let header):
                try assembler.frameStarted(header)
            case .payload(let range, let isFrameEnd):
                guard
                    let event = try assembler.payloadReceived(
                        UnsafeRawBufferPointer(buffer), range: range, isFrameEnd: isFrameEnd, inflater: inflater)
                else { continue }
                switch event {
                case .message(let opcode, let payload): return .message(opcode, payload)
                case .ping(let payload): return .ping(payload)
                case .pong(let payload): return .pong(payload)
                case .close(let close): return .close(close)
                }
            }
        }
    }

    /// Calls `body` with the bytes of an event's payload.
    public func withBytes<R>(
        of payload: MessageAssembler.Payload, input: UnsafeMutableRawBufferPointer,
        _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R {
        try assembler.withBytes(of: payload, input: UnsafeRawBufferPointer(input), body)
    }
}
