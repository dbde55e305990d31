/// How the hub reaches APNs and FCM (DESIGN §17), as the command line gives it. The files are
/// read when the hub starts (`PushDispatcher`), so a bad key stops the start with its name.
///
/// Invariants: APNs is configured exactly when `apnsKey`, `apnsKeyID` and `apnsTeam` are all
/// set; FCM exactly when `fcmCredentials` is.
public struct PushSettings: Sendable {
    /// The APNs token-signing key (`.p8`), its key id and the team id.
    public var apnsKey: String?
    public var apnsKeyID: String?
    public var apnsTeam: String?
    public var apnsEndpoint = PushEndpoint(host: "api.push.apple.com", port: 443)
    /// A Firebase service account's JSON file.
    public var fcmCredentials: String?
    public var fcmEndpoint = PushEndpoint(host: "fcm.googleapis.com", port: 443)
    /// The CAs (PEM) the providers' certificates must chain to (nil: the system's).
    public var caFile: String?
    /// Pushes waiting per provider; beyond, a push fails at once (memory stays bounded).
    public var maxQueued = 500_000

    public init() {}

    public var apnsConfigured: Bool { apnsKey != nil }
    public var fcmConfigured: Bool { fcmCredentials != nil }
}

/// Where a provider listens: an `https://host[:port]` URL (no path).
public struct PushEndpoint: Equatable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `https://host`, `https://host:port` (a trailing `/` allowed); nil otherwise.
    public init?(url text: String) {
        guard text.hasPrefix("https://") else { return nil }
        var rest = Substring(text.dropFirst("https://".count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        self.init(authority: rest)
    }

    /// Parses `host`, `host:port` or `[v6]:port` (port 443 when not given); nil otherwise.
    public init?(authority text: some StringProtocol) {
        let rest = Substring(text)
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("@"), !rest.contains("?") else { return nil }
        var host = rest
        var port: UInt16 = 443
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let number = UInt16(after.dropFirst()), number > 0 else { return nil }
                port = number
            }
        } else if let colon = rest.lastIndex(of: ":") {
            guard let number = UInt16(rest[rest.index(after: colon)...]), number > 0 else { return nil }
            host = rest[..<colon]
            port = number
        }
        guard !host.isEmpty else { return nil }
        self.host = String(host)
        self.port = port
    }

    /// The `:authority` of requests to it.
    public var authority: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == 443 ? name : "\(name):\(port)"
    }

    public var description: String { "https://\(authority)" }
}
