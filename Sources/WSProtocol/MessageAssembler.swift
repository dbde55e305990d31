/// Fragmentation (RFC 6455 §5.4): puts frames back together into messages.
///
/// Control frames may arrive between the fragments of a data message; continuation frames only
/// inside one. Text is UTF-8-validated chunk by chunk as it arrives, so invalid text fails at
/// the offending byte. Limits are checked when a header announces its length.
///
/// Invariants: `messageOpcode` is non-nil exactly while a data message is in progress;
/// `messageBytes` is the sum of the announced lengths of its frames, never over the limit.
public struct MessageAssembler: Sendable {
    /// Where a completed message's payload lives.
    public enum Payload: Equatable, Sendable {
        /// Still in the caller's input buffer (a whole frame in one read: no copy was made).
        case input(Range<Int>)
        /// Collected in `assembledMessage` (fragmented, or split over reads).
        case assembledMessage
        /// Collected in `assembledControl` (a control frame split over reads).
        case assembledControl
    }

    /// A completed message or control frame.
    public enum Event: Equatable, Sendable {
        case message(Opcode, Payload)
        case ping(Payload)
        case pong(Payload)
        case close(ClosePayload)
    }

    public let limits: ProtocolLimits
    var current: FrameHeader?
    var chunksInFrame = 0
    var messageOpcode: Opcode?
    /// Frames of the current message so far, the first included.
    var fragments = 0
    var messageBytes: UInt64 = 0
    var utf8 = UTF8Validator()
    public private(set) var assembledMessage: [UInt8] = []
    public private(set) var assembledControl: [UInt8] = []

    /// A message buffer larger than this is released after its message rather than kept.
    static let retainedCapacity = 64 << 10

    /// Whether no frame or fragmented message is in progress.
    public var isBetweenMessages: Bool { current == nil && messageOpcode == nil }

    public init(limits: ProtocolLimits) {
        self.limits = limits
    }

    /// The decoder yielded a header.
    public mutating func frameStarted(_ header: FrameHeader) throws(ProtocolError) {
        current = header
        chunksInFrame = 0
        if header.opcode.isControl {
            assembledControl.removeAll(keepingCapacity: true)
            return
        }
        if header.opcode == .continuation {
            guard messageOpcode != nil else { throw .unexpectedContinuation }
        } else {
            if messageOpcode != nil { throw .expectedContinuation(header.opcode) }
            messageOpcode = header.opcode
            fragments = 0
            messageBytes = 0
            utf8.reset()
            if assembledMessage.capacity > Self.retainedCapacity {
                assembledMessage = []
            } else {
                assembledMessage.removeAll(keepingCapacity: true)
            }
        }
        fragments += 1
        if fragments - 1 > limits.maxFragments { throw .tooManyFragments(limit: limits.maxFragments) }
        messageBytes += header.payloadLength
        if messageBytes > UInt64(limits.maxMessageBytes) {
            throw .messageTooBig(length: messageBytes, limit: limits.maxMessageBytes)
        }
    }

    /// The decoder yielded payload bytes of the current frame.
    /// - Returns: an event when a message or control frame is complete.
    public mutating func payloadReceived(_ bytes: UnsafeRawBufferPointer, range: Range<Int>, isFrameEnd: Bool)
        throws(ProtocolError) -> Event?
    {
        guard let header = current else { preconditionFailure("payload arrives only after its header") }
        let chunk = UnsafeRawBufferPointer(rebasing: bytes[range])
        let isWholeFrameInInput = isFrameEnd && chunksInFrame == 0
        chunksInFrame += 1
        if header.opcode.isControl {
            if !isWholeFrameInInput { assembledControl.append(contentsOf: chunk) }
            guard isFrameEnd else { return nil }
            current = nil
            let payload: Payload = isWholeFrameInInput ? .input(range) : .assembledControl
            switch header.opcode {
            case .ping: return .ping(payload)
            case .pong: return .pong(payload)
            default:
                if isWholeFrameInInput { return .close(try ClosePayload(parsing: chunk)) }
                return .close(
                    try assembledControl.withUnsafeBytes { b in
                        Result { () throws(ProtocolError) in try ClosePayload(parsing: b) }
                    }.get())
            }
        }
        guard let opcode = messageOpcode else { preconditionFailure("data payload only inside a message") }
        if opcode == .text && !utf8.validate(chunk) {
            throw .invalidUTF8(byteOffset: utf8.invalidByteOffset ?? 0)
        }
        let isWholeMessageInInput = isWholeFrameInInput && header.fin && fragments == 1
        if !isWholeMessageInInput { assembledMessage.append(contentsOf: chunk) }
        guard isFrameEnd else { return nil }
        current = nil
        guard header.fin else { return nil }
        if opcode == .text && !utf8.isComplete { throw .invalidUTF8(byteOffset: utf8.byteCount) }
        messageOpcode = nil
        return .message(opcode, isWholeMessageInInput ? .input(range) : .assembledMessage)
    }

    /// Calls `body` with the bytes of `payload`; they are valid only during the call.
    public func withBytes<R>(
        of payload: Payload, input: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R {
        switch payload {
        case .input(let range): try body(UnsafeRawBufferPointer(rebasing: input[range]))
        case .assembledMessage: try assembledMessage.withUnsafeBytes(body)
        case .assembledControl: try assembledControl.withUnsafeBytes(body)
        }
    }
}
