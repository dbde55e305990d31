/// Limits the decoder enforces on what a peer sends.
///
/// Invariant: every limit is positive. A frame or message over its byte limit is refused as
/// soon as its header announces the length (close 1009), before any of its payload is read.
public struct ProtocolLimits: Equatable, Sendable {
    /// Largest payload of one frame.
    public var maxFrameBytes: Int
    /// Largest message, all fragments together.
    public var maxMessageBytes: Int
    /// Most continuation frames one message may have after its first frame (the Autobahn
    /// suite's 9.3.1 sends a 4 MiB message as 65,536 continuations of 64 bytes after the first).
    public var maxFragments: Int

    public init(maxFrameBytes: Int, maxMessageBytes: Int, maxFragments: Int) {
        precondition(maxFrameBytes > 0 && maxMessageBytes > 0 && maxFragments > 0, "limits are positive")
        self.maxFrameBytes = maxFrameBytes
        self.maxMessageBytes = maxMessageBytes
        self.maxFragments = maxFragments
    }

    /// DESIGN §9: client messages up to 64 KiB; 1,024 fragments is generous for that size.
    public static let `default` = ProtocolLimits(maxFrameBytes: 64 << 10, maxMessageBytes: 64 << 10, maxFragments: 1024)

    /// The echo endpoint's limits: what the Autobahn|Testsuite needs at full size (cases 9.x).
    public static let echo = ProtocolLimits(maxFrameBytes: 16 << 20, maxMessageBytes: 16 << 20, maxFragments: 65_536)
}
