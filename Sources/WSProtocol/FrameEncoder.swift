/// Writes frames (RFC 6455 §5.2). A server's frames go unmasked; a client's are masked with
/// the key the caller passes (use `MaskingKey.random()` for each frame, §5.3).
///
/// Invariant: what it writes is always a single, complete, well-formed frame.
public enum FrameEncoder {
    /// Appends the header bytes of `header` to `out`.
    public static func appendHeader(_ header: FrameHeader, to out: inout [UInt8]) {
        out.append((header.fin ? 0x80 : 0) | header.rsv << 4 | header.opcode.rawValue)
        let maskBit: UInt8 = header.maskingKey == nil ? 0 : 0x80
        let length = header.payloadLength
        if length < 126 {
            out.append(maskBit | UInt8(length))
        } else if length <= UInt64(UInt16.max) {
            out.append(maskBit | 126)
            out.append(UInt8(length >> 8))
            out.append(UInt8(length & 0xFF))
        } else {
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((length >> UInt64(shift)) & 0xFF)) }
        }
        if let key = header.maskingKey {
            out.append(key.bytes.0)
            out.append(key.bytes.1)
            out.append(key.bytes.2)
            out.append(key.bytes.3)
        }
    }

    /// Appends one whole frame carrying `payload`, masked when `maskingKey` is given.
    public static func appendFrame(
        opcode: Opcode, fin: Bool = true, rsv: UInt8 = 0, payload: UnsafeRawBufferPointer,
        maskingKey: MaskingKey? = nil, to out: inout [UInt8]
    ) {
        let header = FrameHeader(
            fin: fin, rsv: rsv, opcode: opcode, maskingKey: maskingKey, payloadLength: UInt64(payload.count))
        appendHeader(header, to: &out)
        let start = out.count
        out.append(contentsOf: payload)
        if let maskingKey, payload.count > 0 {
            out.withUnsafeMutableBytes { bytes in
                _ = maskingKey.apply(to: UnsafeMutableRawBufferPointer(rebasing: bytes[start...]), phase: 0)
            }
        }
    }

    /// Appends a frame whose payload is `payload`'s bytes.
    public static func appendFrame(
        opcode: Opcode, fin: Bool = true, payload: [UInt8], maskingKey: MaskingKey? = nil,
        to out: inout [UInt8]
    ) {
        payload.withUnsafeBytes { appendFrame(opcode: opcode, fin: fin, payload: $0, maskingKey: maskingKey, to: &out) }
    }

    /// Appends a close frame for `close` (an empty payload when it carries no code).
    public static func appendClose(_ close: ClosePayload, maskingKey: MaskingKey? = nil, to out: inout [UInt8]) {
        appendFrame(opcode: .close, payload: close.encoded, maskingKey: maskingKey, to: &out)
    }
}
