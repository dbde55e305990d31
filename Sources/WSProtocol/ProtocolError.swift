/// Every way a peer can break RFC 6455 or exceed our limits, with the close code it earns
/// and one sentence that says what happened.
///
/// Invariant: `closeCode` is 1002 for framing violations, 1007 for bad UTF-8 or bad compressed
/// data, 1009 for size limits (an inflated message's included).
public enum ProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    case reservedBitsSet(UInt8)
    case reservedOpcode(UInt8)
    case unmaskedClientFrame
    case maskedServerFrame
    case fragmentedControlFrame(Opcode)
    case controlFrameTooLong(Opcode, length: UInt64)
    case nonMinimalLength(UInt64)
    case lengthHighBitSet
    case unexpectedContinuation
    case expectedContinuation(Opcode)
    case frameTooBig(length: UInt64, limit: Int)
    case messageTooBig(length: UInt64, limit: Int)
    case tooManyFragments(limit: Int)
    case invalidUTF8(byteOffset: Int)
    case closePayloadOfOneByte
    case invalidCloseCode(UInt16)
    /// RSV1 (permessage-deflate's "compressed") on a control or continuation frame (RFC 7692 §6.1).
    case compressedBitMisplaced(Opcode)
    /// A compressed message is not valid DEFLATE data (RFC 7692 §6.2).
    case invalidCompressedData(String)
    /// A compressed message inflates past the message limit: a deflate bomb.
    case inflatedMessageTooBig(limit: Int)

    public var closeCode: CloseCode {
        switch self {
        case .frameTooBig, .messageTooBig, .tooManyFragments, .inflatedMessageTooBig: .messageTooBig
        case .invalidUTF8, .invalidCompressedData: .invalidPayload
        case .reservedBitsSet, .reservedOpcode, .unmaskedClientFrame, .maskedServerFrame, .fragmentedControlFrame,
            .controlFrameTooLong, .nonMinimalLength, .lengthHighBitSet, .unexpectedContinuation,
            .expectedContinuation, .closePayloadOfOneByte, .invalidCloseCode, .compressedBitMisplaced:
            .protocolError
        }
    }

    public var description: String {
        switch self {
        case .reservedBitsSet(let bits):
            "a frame set reserved bits \(bits) but no extension was negotiated (RFC 6455 §5.2)"
        case .reservedOpcode(let op): "a frame used reserved opcode \(op) (RFC 6455 §5.2)"
        case .unmaskedClientFrame: "a client frame was not masked (RFC 6455 §5.1)"
        case .maskedServerFrame: "a server frame was masked (RFC 6455 §5.1)"
        case .fragmentedControlFrame(let op): "a \(op) frame was fragmented; control frames never are (RFC 6455 §5.5)"
        case .controlFrameTooLong(let op, let length):
            "a \(op) frame carried \(length) bytes; control frames carry at most 125 (RFC 6455 §5.5)"
        case .nonMinimalLength(let length):
            "a frame encoded its length \(length) in more bytes than needed (RFC 6455 §5.2)"
        case .lengthHighBitSet: "a frame's 64-bit length had its most significant bit set (RFC 6455 §5.2)"
        case .unexpectedContinuation: "a continuation frame arrived with no message in progress (RFC 6455 §5.4)"
        case .expectedContinuation(let op):
            "a \(op) frame started a new message before the fragmented one ended (RFC 6455 §5.4)"
        case .frameTooBig(let length, let limit):
            "a frame is \(length) bytes; this endpoint accepts at most \(limit) (config: max_message_bytes)"
        case .messageTooBig(let length, let limit):
            "a message is at least \(length) bytes; this endpoint accepts at most \(limit) (config: max_message_bytes)"
        case .tooManyFragments(let limit): "a message had more than \(limit) continuation frames"
        case .invalidUTF8(let offset): "text was not valid UTF-8 at byte \(offset) of the message"
        case .closePayloadOfOneByte: "a close frame carried one byte; a code takes two (RFC 6455 §5.5.1)"
        case .invalidCloseCode(let code):
            "a close frame carried code \(code), which is not allowed on the wire (RFC 6455 §7.4)"
        case .compressedBitMisplaced(let op):
            "a \(op) frame set RSV1; only the first frame of a data message may be compressed (RFC 7692 §6.1)"
        case .invalidCompressedData(let reason): "a compressed message is not valid DEFLATE data (\(reason))"
        case .inflatedMessageTooBig(let limit):
            "a compressed message inflates to more than \(limit) bytes (config: max_message_bytes)"
        }
    }
}
