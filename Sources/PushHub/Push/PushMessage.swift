/// A push provider (DESIGN §17), spelled as in the client's `push_token` message.
public enum PushProvider: String, Equatable, Hashable, Sendable, CaseIterable {
    case apns
    case fcm
}

/// One device to push to: its provider, its token (APNs: the device token in hex; FCM: the
/// registration token) and, for APNs, the app's bundle id (`apns-topic`).
public struct PushTarget: Equatable, Hashable, Sendable {
    public var provider: PushProvider
    public var token: String
    public var topic: String?

    public init(provider: PushProvider, token: String, topic: String?) {
        self.provider = provider
        self.token = token
        self.topic = topic
    }
}

/// What one silent push carries: a sync (DESIGN §5) as the app sees it on the socket, and how
/// the provider should treat it.
///
/// Invariant: `syncID` is the sync's `id` (`"s-<seq>"`): the app dedupes a sync seen both by
/// push and over the socket by it.
public struct PushMessage: Equatable, Sendable {
    public var syncID: String
    public var seq: Int
    public var reason: String
    public var scope: String
    public var hint: JSONValue?
    public var mandatory: Bool
    /// The sync's collapse key: a newer push with the same key replaces an undelivered older one.
    public var collapse: String?
    /// When the sync expires, in milliseconds since the Unix epoch: the provider stops trying then.
    public var expiresAtMilliseconds: Int

    public init(
        syncID: String, seq: Int, reason: String, scope: String, hint: JSONValue?, mandatory: Bool, collapse: String?,
        expiresAtMilliseconds: Int
    ) {
        self.syncID = syncID
        self.seq = seq
        self.reason = reason
        self.scope = scope
        self.hint = hint
        self.mandatory = mandatory
        self.collapse = collapse
        self.expiresAtMilliseconds = expiresAtMilliseconds
    }
}

extension StringProtocol {
    /// Whether every character is visible ASCII (0x21–0x7E): what a token may hold to travel in
    /// a header value or a URL path without escaping or injecting anything.
    var isVisibleASCII: Bool { !isEmpty && utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F } }

    /// Whether it is one or more hexadecimal digits (either case): an APNs device token, as apps
    /// encode its bytes — safe in a URL path as it is.
    var isHexadecimal: Bool {
        !isEmpty
            && utf8.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (0x61...0x66).contains($0 | 0x20)
            }
    }
}
