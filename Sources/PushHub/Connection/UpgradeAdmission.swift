import WSProtocol

/// Whether a valid upgrade request may become a WebSocket (DESIGN §9 limits): its browser
/// `Origin` must be allowed, and the hub must have room.
///
/// Invariant: a refusal is an HTTP answer that says what to do (403 names the origin, 503 carries
/// `Retry-After`); nil admits.
enum UpgradeAdmission {
    enum Refusal: Equatable {
        case origin(String)
        case capacity(Int)
        case address(Int)

        var response: Response {
            switch self {
            case .origin(let origin):
                return .plain(403, "the origin \(origin) may not connect to this hub (allowed origins are configured)")
            case .capacity(let limit):
                var headers = HeaderFields()
                headers.append(name: "Retry-After", value: "5")
                return .plain(503, "the hub holds its maximum of \(limit) connections; retry later", headers: headers)
            case .address(let limit):
                return .plain(429, "your address holds its maximum of \(limit) connections to this hub")
            }
        }
    }

    /// - Parameter open: WebSocket connections open now, hub-wide.
    static func refusal(origin: String?, open: Int, config: HubConfig) -> Refusal? {
        if let origin, !config.allowedOrigins.isEmpty, !isAllowed(origin, config.allowedOrigins) {
            return .origin(origin)
        }
        if open >= config.maxConnections { return .capacity(config.maxConnections) }
        return nil
    }

    /// Origins compare as RFC 6454 serializations: scheme, host and port, case-insensitively
    /// (`https://App.example.com` is `https://app.example.com`); a trailing `/` is ignored.
    static func isAllowed(_ origin: String, _ allowed: [String]) -> Bool {
        let normalized = normalize(origin)
        return allowed.contains { normalize($0) == normalized }
    }

    private static func normalize(_ origin: String) -> String {
        var text = origin.lowercased()
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}
