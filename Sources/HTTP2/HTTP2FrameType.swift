/// The type octet of a frame header (RFC 9113 §6). Types this list does not define are
/// ignored on receipt (§4.1, §5.5), so the parser hands them over as `.unknown`.
public enum HTTP2FrameType: UInt8, Sendable, CustomStringConvertible {
    case data = 0x0
    case headers = 0x1
    case priority = 0x2
    case rstStream = 0x3
    case settings = 0x4
    case pushPromise = 0x5
    case ping = 0x6
    case goAway = 0x7
    case windowUpdate = 0x8
    case continuation = 0x9

    /// The RFC's name, e.g. `WINDOW_UPDATE`.
    public var description: String {
        switch self {
        case .data: "DATA"
        case .headers: "HEADERS"
        case .priority: "PRIORITY"
        case .rstStream: "RST_STREAM"
        case .settings: "SETTINGS"
        case .pushPromise: "PUSH_PROMISE"
        case .ping: "PING"
        case .goAway: "GOAWAY"
        case .windowUpdate: "WINDOW_UPDATE"
        case .continuation: "CONTINUATION"
        }
    }
}

/// The flag bits of a frame header that RFC 9113 defines; each applies to the types named.
public enum HTTP2FrameFlags {
    /// DATA, HEADERS: the last frame the sender sends on the stream.
    public static let endStream: UInt8 = 0x1
    /// SETTINGS, PING: an acknowledgement.
    public static let ack: UInt8 = 0x1
    /// HEADERS, PUSH_PROMISE, CONTINUATION: the field block ends in this frame.
    public static let endHeaders: UInt8 = 0x4
    /// DATA, HEADERS, PUSH_PROMISE: a pad length octet comes first, padding last.
    public static let padded: UInt8 = 0x8
    /// HEADERS: the deprecated priority fields (5 octets) come before the field block.
    public static let priority: UInt8 = 0x20
}
