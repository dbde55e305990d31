/// A message a client sends (DESIGN §3, protocol v1). Unknown fields are ignored.
///
/// Invariant: a parsed message has every field its type requires, of the right JSON type.
public enum ClientMessage: Equatable, Sendable {
    /// The first message: protocol, identity (token or device), app, and where the sync log stood.
    public struct Hello: Equatable, Sendable {
        public var protocolVersion: Int
        public var token: String?
        public var device: String?
        public var platform: String?
        public var appVersion: String?
        public var lastSync: Int?
        /// The hub state (`welcome.epoch`) that `lastSync` was counted in; nil from older clients.
        public var epoch: String?
        /// The client wants `heartbeat` messages it can see (browsers cannot see pings).
        public var wantsHeartbeats = false
        /// The components it renders (DESIGN §16); nil: it declares none.
        public var components: DeclaredComponents?
    }

    /// The client's cached state of a screen, for resumption.
    public struct Have: Equatable, Sendable {
        public var version: Int?
        public var hash: String?
    }

    case hello(Hello)
    case subscribe(screen: String, have: Have?)
    case unsubscribe(screen: String)
    case ack(sync: String)
    case rendered(screen: String, version: Int)
    /// A goal event for the experiments' results (DESIGN §6), with an optional value.
    case track(event: String, value: Double?)
    /// The app failed to render `version` of `screen` (DESIGN §15): counted by a release's guard.
    case renderError(screen: String, version: Int, component: String?, message: String?)
    /// The device's push token (DESIGN §17).
    case pushToken(provider: PushProvider, token: String, topic: String?)
    /// `"token": null`: the device's registration goes (sign-out); the provider may be left out.
    case pushTokenRemoved

    /// Parses one text message.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(WireError) -> ClientMessage {
        let json: JSONValue
        do {
            json = try JSONReader.parse(bytes, maxDepth: 64)
        } catch {
            throw WireError(code: "bad_json", message: error.description, ref: nil)
        }
        guard case .object = json else {
            throw WireError(code: "bad_message", message: "a message is a JSON object", ref: nil)
        }
        guard let type = json["type"]?.stringValue else {
            throw WireError(code: "bad_message", message: "a message needs a string \"type\"", ref: nil)
        }
        func string(_ field: String) throws(WireError) -> String {
            guard let value = json[field]?.stringValue else {
                throw WireError(code: "bad_message", message: "\(type) needs a string \"\(field)\"", ref: type)
            }
            return value
        }
        func optionalString(_ value: JSONValue?, _ field: String) throws(WireError) -> String? {
            guard let value, value != .null else { return nil }
            guard let text = value.stringValue else {
                throw WireError(code: "bad_message", message: "\"\(field)\" must be a string", ref: type)
            }
            return text
        }
        func optionalInt(_ value: JSONValue?, _ field: String) throws(WireError) -> Int? {
            guard let value, value != .null else { return nil }
            guard let number = value.intValue else {
                throw WireError(code: "bad_message", message: "\"\(field)\" must be an integer", ref: type)
            }
            return number
        }
        func optionalBool(_ value: JSONValue?, _ field: String) throws(WireError) -> Bool? {
            guard let value, value != .null else { return nil }
            guard case .bool(let flag) = value else {
                throw WireError(code: "bad_message", message: "\"\(field)\" must be true or false", ref: type)
            }
            return flag
        }
        switch type {
        case "hello":
            guard let version = json["protocol"]?.intValue else {
                throw WireError(code: "bad_message", message: "hello needs an integer \"protocol\" (1)", ref: type)
            }
            let app = json["app"]
            if let app, app != .null, app.objectValue == nil {
                throw WireError(code: "bad_message", message: "\"app\" must be an object", ref: type)
            }
            return .hello(
                Hello(
                    protocolVersion: version, token: try optionalString(json["token"], "token"),
                    device: try optionalString(json["device"], "device"),
                    platform: try optionalString(app?["platform"], "app.platform"),
                    appVersion: try optionalString(app?["version"], "app.version"),
                    lastSync: try optionalInt(json["last_sync"], "last_sync"),
                    epoch: try optionalString(json["epoch"], "epoch"),
                    wantsHeartbeats: try optionalBool(json["heartbeat"], "heartbeat") ?? false,
                    components: try declaredComponents(json["components"])))
        case "subscribe":
            let screen = try string("screen")
            var have: Have?
            if let value = json["have"], value != .null {
                guard value.objectValue != nil else {
                    throw WireError(code: "bad_message", message: "\"have\" must be an object", ref: type)
                }
                have = Have(
                    version: try optionalInt(value["version"], "have.version"),
                    hash: try optionalString(value["hash"], "have.hash"))
            }
            return .subscribe(screen: screen, have: have)
        case "unsubscribe":
            return .unsubscribe(screen: try string("screen"))
        case "ack":
            return .ack(sync: try string("sync"))
        case "rendered":
            guard let version = json["version"]?.intValue else {
                throw WireError(code: "bad_message", message: "rendered needs an integer \"version\"", ref: type)
            }
            return .rendered(screen: try string("screen"), version: version)
        case "track":
            return try track(json)
        case "render_error":
            return try renderError(json)
        case "push_token":
            return try pushToken(json)
        default:
            throw WireError(code: "unknown_type", message: "no message type \"\(type)\" in protocol v1", ref: type)
        }
    }
}

extension ClientMessage {
    /// `hello.components` (absent or null: none declared).
    private static func declaredComponents(_ value: JSONValue?) throws(WireError) -> DeclaredComponents? {
        guard let value, value != .null else { return nil }
        do {
            return try DeclaredComponents(json: value)
        } catch {
            throw WireError(code: error.code, message: error.message, ref: "hello")
        }
    }

    /// The longest goal event name (`[A-Za-z0-9_.:-]`).
    public static let maxTrackEventLength = 64
    /// The largest magnitude of a goal event's value: sums of millions of them stay finite and
    /// exact to the cent (an amount beyond a trillion is a mistake, not a purchase).
    public static let maxTrackValue = 1e12

    private static func track(_ json: JSONValue) throws(WireError) -> ClientMessage {
        func refuse(_ message: String) -> WireError { WireError(code: "bad_track", message: message, ref: "track") }
        guard let event = json["event"]?.stringValue else { throw refuse("track needs a string \"event\"") }
        let allowed = event.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || "_.:-".utf8.contains(byte)
        }
        guard !event.isEmpty, event.utf8.count <= maxTrackEventLength, allowed else {
            throw refuse("\"event\" must be 1 to \(maxTrackEventLength) characters of A-Z a-z 0-9 _ . : -")
        }
        var value: Double?
        if let member = json["value"], member != .null {
            guard let number = member.numberValue, number.isFinite, abs(number) <= maxTrackValue else {
                throw refuse("\"value\" must be a number from -1e12 to 1e12")
            }
            value = number
        }
        return .track(event: event, value: value)
    }
}

extension ClientMessage {
    /// The longest `component` and `message` of a `render_error`, in Unicode scalars (SDKs cut
    /// longer text to fit).
    public static let maxRenderErrorComponent = 200
    public static let maxRenderErrorMessage = 1000

    private static func renderError(_ json: JSONValue) throws(WireError) -> ClientMessage {
        func refuse(_ message: String) -> WireError {
            WireError(code: "bad_render_error", message: message, ref: "render_error")
        }
        guard let screen = json["screen"]?.stringValue else { throw refuse("render_error needs a string \"screen\"") }
        guard let version = json["version"]?.intValue else { throw refuse("render_error needs an integer \"version\"") }
        func text(_ name: String, atMost limit: Int) throws(WireError) -> String? {
            guard let member = json[name], member != .null else { return nil }
            guard let value = member.stringValue else { throw refuse("\"\(name)\" must be a string") }
            guard value.unicodeScalars.count <= limit else {
                throw refuse("\"\(name)\" has \(value.unicodeScalars.count) characters; at most \(limit)")
            }
            return value
        }
        _ = try text("hash", atMost: 64)
        return .renderError(
            screen: screen, version: version, component: try text("component", atMost: maxRenderErrorComponent),
            message: try text("message", atMost: maxRenderErrorMessage))
    }
}

extension ClientMessage {
    /// The longest push token and APNs topic: tokens are 64 hex digits (APNs) or ~160 characters
    /// (FCM) today; both services say they may grow, so there is room.
    public static let maxPushTokenLength = 1024
    public static let maxPushTopicLength = 255

    private static func pushToken(_ json: JSONValue) throws(WireError) -> ClientMessage {
        func refuse(_ message: String) -> WireError {
            WireError(code: "bad_message", message: message, ref: "push_token")
        }
        if json["token"] == .null { return .pushTokenRemoved }
        guard let name = json["provider"]?.stringValue, let provider = PushProvider(rawValue: name) else {
            throw refuse("push_token needs \"provider\": \"apns\" or \"fcm\"")
        }
        guard let token = json["token"]?.stringValue else {
            throw refuse("push_token needs \"token\": the provider's token, or null to remove it")
        }
        // Visible ASCII only: a token or topic goes into a URL path or an HTTP/2 header.
        guard token.utf8.count <= maxPushTokenLength, token.isVisibleASCII else {
            throw refuse("\"token\" must be 1 to \(maxPushTokenLength) visible ASCII characters (null removes it)")
        }
        var topic: String?
        if let value = json["topic"], value != .null {
            guard let text = value.stringValue, text.utf8.count <= maxPushTopicLength, text.isVisibleASCII
            else {
                throw refuse("\"topic\" must be the app's bundle id (1 to \(maxPushTopicLength) visible characters)")
            }
            topic = text
        }
        if provider == .apns {
            guard topic != nil else { throw refuse("an APNs push_token needs \"topic\": the app's bundle id") }
            // APNs device tokens are hexadecimal (the app hex-encodes the token's bytes).
            guard token.isHexadecimal else {
                throw refuse("an APNs \"token\" is the device token's bytes in hexadecimal")
            }
        }
        return .pushToken(provider: provider, token: token, topic: topic)
    }
}

/// A v1 message the hub could not act on: answered with an `error` message, the client stays.
public struct WireError: Error, Equatable, Sendable {
    public var code: String
    public var message: String
    public var ref: String?
}
