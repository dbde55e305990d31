/// One device's push registration (DESIGN §17): who it belongs to, where a silent push reaches
/// it, and what targeting knows about it from the session that registered it — so that a sync
/// made while it is offline can tell whether it is for it.
///
/// Invariants: `device` is non-empty; `token` is non-empty; an APNs registration has a topic.
/// `claims` leaves out the claims that change with every token (`exp`, `iat`, `nbf`, `jti`), so
/// that a client re-registering after a token refresh is not a change.
public struct PushDevice: Equatable, Sendable {
    public var user: String?
    public var device: String
    public var provider: PushProvider
    public var token: String
    /// The APNs topic (the app's bundle id); nil for FCM.
    public var topic: String?
    public var platform: String?
    public var appVersion: SemanticVersion?
    public var claimCohorts: [String]
    public var claims: JSONObject
    /// When this registration last changed (milliseconds since the Unix epoch).
    public var updatedAt: Int

    /// The claims that change with every token a client is issued, left out of a registration.
    static let volatileClaims: Set<String> = ["exp", "iat", "nbf", "jti"]

    /// The registration a signed-in client asks for.
    init(_ client: ClientAttributes, provider: PushProvider, token: String, topic: String?, at time: Int) {
        user = client.user
        device = client.device
        self.provider = provider
        self.token = token
        self.topic = topic
        platform = client.platform
        appVersion = client.appVersion
        claimCohorts = client.claimCohorts
        var kept = JSONObject()
        for (name, value) in client.claims where !Self.volatileClaims.contains(name) { kept[name] = value }
        claims = kept
        updatedAt = time
    }

    init(
        user: String?, device: String, provider: PushProvider, token: String, topic: String?, platform: String?,
        appVersion: SemanticVersion?, claimCohorts: [String], claims: JSONObject, updatedAt: Int
    ) {
        self.user = user
        self.device = device
        self.provider = provider
        self.token = token
        self.topic = topic
        self.platform = platform
        self.appVersion = appVersion
        self.claimCohorts = claimCohorts
        self.claims = claims
        self.updatedAt = updatedAt
    }

    public var key: DeviceKey { DeviceKey(user: user, device: device) }

    /// Whether `other` registers the same thing (its time aside).
    func isSameRegistration(as other: PushDevice) -> Bool {
        var other = other
        other.updatedAt = updatedAt
        return self == other
    }

    /// The device as targeting sees a connected client (DESIGN §5): a sync is for an offline
    /// device exactly when it would be for the session that registered it.
    var attributes: ClientAttributes {
        ClientAttributes(
            session: "", user: user, device: device, platform: platform, appVersion: appVersion,
            claimCohorts: claimCohorts, claims: claims, connectedAt: updatedAt)
    }

    /// The last characters of the token: enough to tell two apart, never enough to push with.
    var tokenSuffix: String { "…" + String(token.suffix(6)) }

    /// What `GET /v1/devices` shows (never the whole token).
    var json: JSONValue {
        .object([
            "user": user.map(JSONValue.string) ?? .null, "device": .string(device),
            "provider": .string(provider.rawValue),
            "token_suffix": .string(tokenSuffix), "topic": topic.map(JSONValue.string) ?? .null,
            "platform": platform.map(JSONValue.string) ?? .null,
            "app_version": appVersion.map { .string($0.description) } ?? .null,
            "updated_at": .number(Double(updatedAt)),
        ])
    }
}

/// Which device a registration belongs to: a signed-in user's device, or an anonymous one.
public struct DeviceKey: Hashable, Sendable {
    public var user: String?
    public var device: String

    /// As hubs tell each other (`{"user","device"}`).
    var json: JSONValue { .object(["user": user.map(JSONValue.string) ?? .null, "device": .string(device)]) }

    init(user: String?, device: String) {
        self.user = user
        self.device = device
    }

    init?(json: JSONValue) {
        guard let device = json["device"]?.stringValue else { return nil }
        self.init(user: json["user"]?.stringValue, device: device)
    }
}
