import Foundation
import ScreenTree

/// The sync a silent push carries (DESIGN §17), found in what the platform hands the app: APNs
/// `userInfo` `{"aps":{"content-available":1},"pushhub":{"type":"sync","id":…,"seq":…,…}}`, or an
/// FCM data map `{"pushhub":"<that object as a JSON string>"}`.
enum PushedSync {
    /// The sync object of `payload`, or nil when it carries none (not a PushHub push, or a
    /// malformed one: no `type` "sync" or no string `id`).
    static func message(in payload: [AnyHashable: Any]) -> JSONValue? {
        let value: JSONValue?
        switch payload["pushhub"] {
        case let text as String: value = try? JSONReader.parse(text)
        case let object as [AnyHashable: Any]: value = json(object)
        default: value = nil
        }
        guard let value, value["type"]?.stringValue == "sync", value["id"]?.stringValue != nil else { return nil }
        return value
    }

    /// A Foundation property list (NSDictionary, NSNumber…) as JSON; nil when it is not JSON.
    private static func json(_ object: [AnyHashable: Any]) -> JSONValue? {
        guard JSONSerialization.isValidJSONObject(object),
            let data = try? JSONSerialization.data(withJSONObject: object)
        else { return nil }
        return try? JSONReader.parse(Array(data))
    }
}
