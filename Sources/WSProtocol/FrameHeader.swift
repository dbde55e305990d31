/// The fixed part of a WebSocket frame (RFC 6455 §5.2):
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-------+-+-------------+-------------------------------+
/// |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
/// |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
/// |N|V|V|V|       |S|             |   (if payload len==126/127)   |
/// | |1|2|3|       |K|             |                               |
/// +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
/// |     Extended payload length continued, if payload len == 127  |
/// + - - - - - - - - - - - - - - - +-------------------------------+
/// |                               |Masking-key, if MASK set to 1  |
/// +-------------------------------+-------------------------------+
/// ```
///
/// Invariant: `rsv` holds only the three RSV bits (0...7, RSV1 is 0b100).
public struct FrameHeader: Equatable, Sendable {
    public var fin: Bool
    public var rsv: UInt8
    public var opcode: Opcode
    public var maskingKey: MaskingKey?
    public var payloadLength: UInt64

    public init(fin: Bool = true, rsv: UInt8 = 0, opcode: Opcode, maskingKey: MaskingKey? = nil, payloadLength: UInt64)
    {
        precondition(rsv < 8, "rsv holds three bits")
        self.fin = fin
        self.rsv = rsv
        self.opcode = opcode
        self.maskingKey = maskingKey
        self.payloadLength = payloadLength
    }

    /// RSV1, which permessage-deflate (RFC 7692 §6) gives the meaning "this message is compressed".
    public static let compressedBit: UInt8 = 0b100

    /// The largest header: 2 fixed bytes, 8 bytes of extended length, 4 bytes of masking key.
    public static let maxEncodedSize = 14

    /// The number of bytes this header takes on the wire.
    public var encodedSize: Int {
        let lengthBytes = payloadLength < 126 ? 0 : (payloadLength <= UInt64(UInt16.max) ? 2 : 8)
        return 2 + lengthBytes + (maskingKey == nil ? 0 : 4)
    }
}
