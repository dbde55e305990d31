/// One parameter of a SETTINGS frame (RFC 9113 §6.5.1): a 16-bit identifier and a 32-bit value.
public struct HTTP2Setting: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// A setting's identifier. A struct: identifiers a peer sends that this list does not know
    /// are ignored (§6.5.2), not refused.
    public struct Identifier: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: UInt16

        public init(rawValue: UInt16) { self.rawValue = rawValue }

        public static let headerTableSize = Identifier(rawValue: 0x1)
        public static let enablePush = Identifier(rawValue: 0x2)
        public static let maxConcurrentStreams = Identifier(rawValue: 0x3)
        public static let initialWindowSize = Identifier(rawValue: 0x4)
        public static let maxFrameSize = Identifier(rawValue: 0x5)
        public static let maxHeaderListSize = Identifier(rawValue: 0x6)

        private static let names = [
            "SETTINGS_HEADER_TABLE_SIZE", "SETTINGS_ENABLE_PUSH", "SETTINGS_MAX_CONCURRENT_STREAMS",
            "SETTINGS_INITIAL_WINDOW_SIZE", "SETTINGS_MAX_FRAME_SIZE", "SETTINGS_MAX_HEADER_LIST_SIZE",
        ]

        public var description: String {
            (1...6).contains(rawValue) ? Self.names[Int(rawValue) - 1] : "setting 0x" + String(rawValue, radix: 16)
        }
    }

    public var identifier: Identifier
    public var value: UInt32

    public init(_ identifier: Identifier, _ value: UInt32) {
        self.identifier = identifier
        self.value = value
    }

    public var description: String { "\(identifier)=\(value)" }
}
