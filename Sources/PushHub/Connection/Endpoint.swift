import WSProtocol

/// Which listener accepted a connection.
enum ListenerKind: Sendable {
    /// The client listener: WebSocket upgrades only.
    case client
    /// The admin listener: the HTTP/1.1 admin API.
    case admin
}

/// What a WebSocket connection was opened for: the path of its upgrade request decides.
enum Endpoint: Sendable, Equatable {
    /// `/v1/connect`: the client protocol v1 (DESIGN §3); `pushhub.v1` is its subprotocol.
    case client
    /// `--echo-path`: echoes every message, for conformance and benchmarks (DESIGN §10).
    case echo

    static let clientPath = "/v1/connect"
    static let subprotocols = ["pushhub.v1"]

    /// The endpoint serving `path`, if any.
    static func route(_ path: Substring, config: HubConfig) -> Endpoint? {
        if path == clientPath { return .client }
        if let echo = config.echoPath, path == echo { return .echo }
        return nil
    }

    func limits(_ config: HubConfig) -> ProtocolLimits {
        switch self {
        case .client: config.clientLimits
        case .echo: config.echoLimits
        }
    }
}
