/// The body of a close frame (RFC 6455 §5.5.1): nothing, or a 2-byte code and a UTF-8 reason.
///
/// Invariants: a parsed payload's code `isValidOnWire` and its reason is valid UTF-8; an encoded
/// reason is at most 123 bytes so that the whole payload fits a control frame.
public struct ClosePayload: Equatable, Sendable {
    public var code: CloseCode?
    public var reason: String

    public init(code: CloseCode?, reason: String = "") {
        self.code = code
        self.reason = reason
    }

    /// Largest reason that fits a control frame after the 2-byte code.
    public static let maxReasonBytes = 123

    /// Parses and validates a received close payload.
    public init(parsing payload: UnsafeRawBufferPointer) throws(ProtocolError) {
        switch payload.count {
        case 0:
            self.init(code: nil)
        case 1:
            throw .closePayloadOfOneByte
        default:
            let code = CloseCode(UInt16(payload[0]) << 8 | UInt16(payload[1]))
            guard code.isValidOnWire else { throw .invalidCloseCode(code.rawValue) }
            let reasonBytes = UnsafeRawBufferPointer(rebasing: payload[2...])
            var validator = UTF8Validator()
            guard validator.validate(reasonBytes), validator.isComplete else {
                throw .invalidUTF8(byteOffset: validator.invalidByteOffset ?? reasonBytes.count)
            }
            self.init(code: code, reason: String(decoding: reasonBytes, as: UTF8.self))
        }
    }

    /// The payload bytes: the code big-endian, then the reason cut to 123 bytes at a
    /// character boundary.
    public var encoded: [UInt8] {
        guard let code else { return [] }
        var bytes: [UInt8] = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        var reasonBytes = 0
        for scalar in reason.unicodeScalars {
            let length = UTF8.width(scalar)
            if reasonBytes + length > Self.maxReasonBytes { break }
            reasonBytes += length
            bytes.append(contentsOf: String(scalar).utf8)
        }
        return bytes
    }
}
