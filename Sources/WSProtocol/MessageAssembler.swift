/// Fragmentation (RFC 6455 §5.4): puts frames back together into messages.
///
/// Control frames may arrive between the fragments of a data message; continuation frames only
/// inside one. Text is UTF-8-validated chunk by chunk as it arrives, so invalid text fails at
/// the offending byte. Limits are checked when a header announces its length.
///
/// A message whose first frame has RSV1 set is compressed (RFC 7692 permessage-deflate; the
/// decoder lets RSV1 through only when it was agreed): its frames are collected, then inflated
/// as a whole into `inflatedMessage`, bounded by the same message limit, and validated then.
///
/// Invariants: `messageOpcode` is non-nil exactly while a data message is in progress;
/// `messageBytes` is the sum of the announced lengths of its frames, never over the limit;
/// `inflatedMessage` never holds more than the limit.
public struct MessageAssembler: Sendable {
    /// Where a completed message's payload lives.
    public enum Payload: Equatable, Sendable {
        /// Still in the caller's input buffer (a whole frame in one read: no copy was made).
        case input(Range<Int>)
        /// Collected in `assembledMessage` (fragmented, or split over reads).
        case assembledMessage
        /// Collected in `assembledControl` (a control frame split over reads).
        case assembledControl
        /// Inflated into `inflatedMessage` (a compressed message).
        case inflatedMessage
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
    /// Whether the message in progress is compressed (RSV1 on its first frame).
    var isMessageCompressed = false
    public private(set) var assembledMessage: [UInt8] = []
    public private(set) var assembledControl: [UInt8] = []
    public private(set) var inflatedMessage: [UInt8] = []

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
        let isCompressed = header.rsv & FrameHeader.compressedBit != 0
        if header.opcode.isControl {
            if isCompressed { throw .compressedBitMisplaced(header.opcode) }
            assembledControl.removeAll(keepingCapacity: true)
            return
        }
        if header.opcode == .continuation {
            guard messageOpcode != nil else { throw .unexpectedContinuation }
            if isCompressed { throw .compressedBitMisplaced(header.opcode) }
        } else {
            if messageOpcode != nil { throw .expectedContinuation(header.opcode) }
            messageOpcode = header.opcode
            isMessageCompressed = isCompressed
            fragments = 0
            messageBytes = 0
            utf8.reset()
            Self.release(&assembledMessage)
            Self.release(&inflatedMessage)
        }
        fragments += 1
        if fragments - 1 > limits.maxFragments { throw .tooManyFragments(limit: limits.maxFragments) }
        messageBytes += header.payloadLength
        if messageBytes > UInt64(limits.maxMessageBytes) {
            throw .messageTooBig(length: messageBytes, limit: limits.maxMessageBytes)
        }
    }

    /// Empties a message buffer for the next message, keeping its memory unless it is large.
    private static func release(_ buffer: inout [UInt8]) {
        if buffer.capacity > retainedCapacity {
            buffer = []
        } else {
            buffer.removeAll(keepingCapacity: true)
        }
    }

    /// The decoder yielded payload bytes of the current frame.
    /// - Parameter inflater: inflates compressed messages; required once RSV1 may be set.
    /// - Returns: an event when a message or control frame is complete.
    public mutating func payloadReceived(
        _ bytes: UnsafeRawBufferPointer, range: Range<Int>, isFrameEnd: Bool, inflater: Inflater? = nil
    ) throws(ProtocolError) -> Event? {
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
        if opcode == .text && !isMessageCompressed && !utf8.validate(chunk) {
            throw .invalidUTF8(byteOffset: utf8.invalidByteOffset ?? 0)
        }
        let isWholeMessageInInput = isWholeFrameInInput && header.fin && fragments == 1
        if !isWholeMessageInInput { assembledMessage.append(contentsOf: chunk) }
        guard isFrameEnd else { return nil }
        current = nil
        guard header.fin else { return nil }
        messageOpcode = nil
        var payload: Payload = isWholeMessageInInput ? .input(range) : .assembledMessage
        if isMessageCompressed {
            guard let inflater else { preconditionFailure("RSV1 is allowed only with an inflater to read it") }
            try inflate(payload, input: bytes, with: inflater, validatingText: opcode == .text)
            payload = .inflatedMessage
        }
        if opcode == .text && !utf8.isComplete { throw .invalidUTF8(byteOffset: utf8.byteCount) }
        return .message(opcode, payload)
    }

    /// Inflates the compressed message at `payload` into `inflatedMessage`, within the limit; a
    /// text message's inflated bytes go through `utf8` (which saw none of its compressed ones).
    private mutating func inflate(
        _ payload: Payload, input: UnsafeRawBufferPointer, with inflater: Inflater, validatingText: Bool
    ) throws(ProtocolError) {
        let limit = limits.maxMessageBytes
        var output = inflatedMessage
        inflatedMessage = []  // uniquely referenced while inflating: no copy on write
        defer { inflatedMessage = output }
        let result = withBytes(of: payload, input: input) { compressed in
            Result { () throws(Inflater.Failure) in try inflater.decompress(compressed, into: &output, limit: limit) }
        }
        switch result {
        case .success: break
        case .failure(.tooBig): throw .inflatedMessageTooBig(limit: limit)
        case .failure(.corrupt(let reason)): throw .invalidCompressedData(reason)
        }
        if validatingText && !output.withUnsafeBytes({ utf8.validate($0) }) {
            throw .invalidUTF8(byteOffset: utf8.invalidByteOffset ?? 0)
        }
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
        case .inflatedMessage: try inflatedMessage.withUnsafeBytes(body)
        }
    }
}
