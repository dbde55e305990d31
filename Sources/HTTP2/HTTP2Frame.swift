/// One HTTP/2 frame (RFC 9113 §4.1, §6), as the parser hands it over and the writer writes it.
///
/// ```
/// +-----------------------------------------------+
/// |                 Length (24)                   |
/// +---------------+---------------+---------------+
/// |   Type (8)    |   Flags (8)   |
/// +-+-------------+---------------+-------------------------------+
/// |R|                 Stream Identifier (31)                      |
/// +=+=============================================================+
/// |                   Frame Payload (0...)                      ...
/// +---------------------------------------------------------------+
/// ```
/// Reserved bits (R above, and the one before a WINDOW_UPDATE increment, a GOAWAY last stream
/// or a PUSH_PROMISE promised stream) are ignored on receipt and never set when writing.
/// Padding is removed; `padding` counts the octets it took (the pad length octet included),
/// because they count against flow control (§6.1).
public struct HTTP2Frame: Equatable, Sendable {
    /// A frame's payload by type; flags the RFC does not define for a type are dropped.
    public enum Payload: Equatable, Sendable {
        case data([UInt8], endStream: Bool, padding: Int = 0)
        case headers(
            fragment: [UInt8], endStream: Bool, endHeaders: Bool, priority: HTTP2Priority? = nil, padding: Int = 0)
        case priority(HTTP2Priority)
        case rstStream(HTTP2ErrorCode)
        case settings([HTTP2Setting], ack: Bool)
        case pushPromise(promisedStreamID: UInt32, fragment: [UInt8], endHeaders: Bool, padding: Int = 0)
        /// The 8 opaque octets, big-endian.
        case ping(opaque: UInt64, ack: Bool)
        case goAway(lastStreamID: UInt32, error: HTTP2ErrorCode, debugData: [UInt8])
        case windowUpdate(increment: UInt32)
        case continuation(fragment: [UInt8], endHeaders: Bool)
        /// A type RFC 9113 does not define: ignored, except inside a field block (§6.10).
        /// Its payload is skipped, not kept.
        case unknown(type: UInt8, flags: UInt8, length: Int)
    }

    public var streamID: UInt32
    public var payload: Payload

    public init(streamID: UInt32, _ payload: Payload) {
        self.streamID = streamID
        self.payload = payload
    }

    /// The frame's type octet.
    public var typeCode: UInt8 {
        switch payload {
        case .data: HTTP2FrameType.data.rawValue
        case .headers: HTTP2FrameType.headers.rawValue
        case .priority: HTTP2FrameType.priority.rawValue
        case .rstStream: HTTP2FrameType.rstStream.rawValue
        case .settings: HTTP2FrameType.settings.rawValue
        case .pushPromise: HTTP2FrameType.pushPromise.rawValue
        case .ping: HTTP2FrameType.ping.rawValue
        case .goAway: HTTP2FrameType.goAway.rawValue
        case .windowUpdate: HTTP2FrameType.windowUpdate.rawValue
        case .continuation: HTTP2FrameType.continuation.rawValue
        case .unknown(let type, _, _): type
        }
    }
}

/// The priority fields of HEADERS and PRIORITY frames (RFC 9113 §5.3.2, deprecated: parsed
/// so that a frame carrying them is read right, otherwise ignored).
public struct HTTP2Priority: Equatable, Sendable {
    public var exclusive: Bool
    public var dependency: UInt32
    /// The weight field as sent (the weight minus one).
    public var weight: UInt8

    public init(exclusive: Bool, dependency: UInt32, weight: UInt8) {
        self.exclusive = exclusive
        self.dependency = dependency
        self.weight = weight
    }
}
