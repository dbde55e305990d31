/// Why the request for one push could not be made; the push fails with this description (it
/// would fail the same way every time, so it is not retried).
public enum PushRequestError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The body exceeds what the provider accepts (the sync's `hint` is too big).
    case payloadTooLarge(provider: PushProvider, bytes: Int, limit: Int)
    /// The device token cannot be a token of this provider (empty, or characters a path or a
    /// header cannot carry).
    case badDeviceToken(provider: PushProvider)
    /// An APNs push without the app's bundle id (`apns-topic`).
    case missingTopic
    /// The target is another provider's device.
    case wrongProvider(expected: PushProvider, found: PushProvider)

    public var description: String {
        switch self {
        case .payloadTooLarge(let provider, let bytes, let limit):
            "payload too large: the \(provider.rawValue) push is \(bytes) bytes; the provider accepts at most \(limit)"
                + " (make the sync's hint smaller)"
        case .badDeviceToken(let provider):
            "the \(provider.rawValue) device token is empty or not "
                + (provider == .apns ? "hexadecimal" : "visible ASCII")
        case .missingTopic: "the APNs device has no topic (the app's bundle id, sent with its push_token)"
        case .wrongProvider(let expected, let found):
            "a \(found.rawValue) device cannot be pushed through \(expected.rawValue)"
        }
    }
}

/// The sync a push carries, as the app reads it (DESIGN §17): the socket's sync message without
/// `jitter_ms`, members in this order:
///
///     {"type":"sync","id":"s-12","seq":12,"reason":…,"scope":…[,"hint":…][,"mandatory":true]}
///
/// APNs carries it as the object `pushhub` of the notification's userInfo, FCM as the string
/// value of the data key `pushhub` (FCM's data values are strings).
public enum PushPayload {
    /// The providers' limit on a notification's payload (APNs: the JSON body; FCM: the data).
    public static let maxBytes = 4096

    /// The sync object's JSON bytes.
    public static func syncObject(_ message: PushMessage) -> [UInt8] {
        ServerMessage.object(
            Sync.messageMembers(
                seq: message.seq, reason: message.reason, scope: message.scope, hint: message.hint,
                mandatory: message.mandatory))
    }
}
