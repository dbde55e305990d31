/// A frame's opcode (RFC 6455 §5.2, §11.8).
///
/// Invariant: only the six opcodes RFC 6455 defines can be represented; a reserved opcode
/// (3–7, 0xB–0xF) never becomes an `Opcode`, the decoder rejects it with 1002.
public enum Opcode: UInt8, Sendable, Equatable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Control frames (close, ping, pong) have the high bit of the opcode set (§5.5).
    public var isControl: Bool { rawValue & 0x8 != 0 }
}
