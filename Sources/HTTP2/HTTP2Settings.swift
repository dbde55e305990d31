/// What one endpoint declared in its SETTINGS frames (RFC 9113 §6.5.2), starting from the
/// initial values the RFC gives every connection. The client keeps the server's here.
///
/// Invariant: every value is within the range §6.5.2 allows (`apply` refuses others):
/// `initialWindowSize` ≤ 2³¹−1, `maxFrameSize` in 2¹⁴…2²⁴−1.
public struct HTTP2Settings: Equatable, Sendable {
    /// The largest window a flow-control window may reach (§6.9.1).
    public static let maxWindowSize = Int(Int32.max)
    /// The smallest SETTINGS_MAX_FRAME_SIZE, and every endpoint's initial one (§4.2).
    public static let defaultMaxFrameSize = 16_384
    /// The initial flow-control window of a connection and of every stream (§6.9.2).
    public static let defaultWindowSize = 65_535

    public var headerTableSize = 4096
    public var enablePush = true
    /// nil: no limit declared (the RFC's initial value).
    public var maxConcurrentStreams: Int?
    public var initialWindowSize = HTTP2Settings.defaultWindowSize
    public var maxFrameSize = HTTP2Settings.defaultMaxFrameSize
    /// nil: no limit declared.
    public var maxHeaderListSize: Int?

    public init() {}

    /// Takes one setting from a SETTINGS frame; unknown identifiers are ignored (§6.5.2).
    /// - Throws: `.badSettingValue` for a value out of its range — a FLOW_CONTROL_ERROR for an
    ///   initial window above 2³¹−1, a PROTOCOL_ERROR for the others.
    public mutating func apply(_ setting: HTTP2Setting) throws(HTTP2ProtocolError) {
        let value = Int(setting.value)
        switch setting.identifier {
        case .headerTableSize: headerTableSize = value
        case .enablePush:
            guard value <= 1 else { throw .badSettingValue(setting) }
            enablePush = value == 1
        case .maxConcurrentStreams: maxConcurrentStreams = value
        case .initialWindowSize:
            guard value <= Self.maxWindowSize else { throw .badSettingValue(setting) }
            initialWindowSize = value
        case .maxFrameSize:
            guard (Self.defaultMaxFrameSize...(1 << 24) - 1).contains(value) else { throw .badSettingValue(setting) }
            maxFrameSize = value
        case .maxHeaderListSize: maxHeaderListSize = value
        default: return
        }
    }
}
