import Foundation
import ScreenTree

/// A device's push token for the hub's silent-push fallback (DESIGN §17), as the app got it from
/// the platform: APNs (`application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`, sent
/// as lower-case hex with the app's bundle id as `topic`) or FCM (`onNewToken`, sent as given).
///
/// The wire form (docs/protocol.md): `{"type":"push_token","provider":"apns","token":"…","topic":"…"}`;
/// FCM's has no `topic`. It is also the stored form (`push_token`, outside every user's scope:
/// the token belongs to the device).
public struct PushToken: Sendable, Equatable {
    public enum Provider: String, Sendable, Equatable {
        case apns
        case fcm
    }

    public let provider: Provider
    public let token: String
    /// The APNs topic (the app's bundle id); nil for FCM.
    public let topic: String?

    /// An APNs device token (the bytes iOS hands the app), sent as lower-case hex.
    public static func apns(deviceToken: [UInt8], topic: String) -> PushToken {
        PushToken(provider: .apns, token: deviceToken.map { String(format: "%02x", $0) }.joined(), topic: topic)
    }

    /// An APNs device token as iOS hands it (`Data`), sent as lower-case hex.
    public static func apns(deviceToken: Data, topic: String) -> PushToken {
        apns(deviceToken: Array(deviceToken), topic: topic)
    }

    /// An FCM registration token.
    public static func fcm(_ token: String) -> PushToken { PushToken(provider: .fcm, token: token, topic: nil) }

    private init(provider: Provider, token: String, topic: String?) {
        self.provider = provider
        self.token = token
        self.topic = topic
    }

    /// The `push_token` message registering this token.
    var message: JSONObject {
        var message: JSONObject = [
            "type": .string("push_token"), "provider": .string(provider.rawValue), "token": .string(token),
        ]
        if let topic { message["topic"] = .string(topic) }
        return message
    }

    /// The `push_token` message removing this device's token (sign-out).
    static let removal: JSONObject = ["type": .string("push_token"), "token": .null]

    /// The stored form: the message itself.
    var stored: String { JSONWriter.string(.object(message)) }

    /// A stored token; nil when unreadable (then it is as good as absent).
    init?(stored text: String) {
        guard let value = try? JSONReader.parse(text),
            let provider = value["provider"]?.stringValue.flatMap(Provider.init),
            let token = value["token"]?.stringValue
        else { return nil }
        self.init(provider: provider, token: token, topic: value["topic"]?.stringValue)
    }
}
