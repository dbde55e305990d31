/// What a SIGHUP may change without a restart (issue 11): the limits, the timeouts, the log
/// level and the TLS certificates (read again; new connections get them) take effect at once on
/// every loop; listeners, the data dir, loops, identity and
/// retention need a restart, and a reload that changes them says so and keeps the running value.
///
/// Invariant: `applying` returns the running config with only the reloadable settings of `new`.
public enum ConfigReload {
    /// One setting: its config-file key, how to show it, whether a reload applies it.
    private struct Setting: Sendable {
        var key: String
        var reloadable: Bool
        var show: @Sendable (HubConfig) -> String
    }

    private static let settings: [Setting] = [
        Setting(key: "max_connections", reloadable: true) { "\($0.maxConnections)" },
        Setting(key: "max_subscriptions", reloadable: true) { "\($0.maxSubscriptions)" },
        Setting(key: "message_rate", reloadable: true) { "\($0.clientMessageRate.perSecond)/s" },
        Setting(key: "message_burst", reloadable: true) { "\($0.clientMessageRate.burst)" },
        Setting(key: "allowed_origins", reloadable: true) { $0.allowedOrigins.joined(separator: ",") },
        Setting(key: "handshake_timeout", reloadable: true) { "\($0.handshakeTimeout)" },
        Setting(key: "hello_timeout", reloadable: true) { "\($0.helloTimeout)" },
        Setting(key: "ping_interval", reloadable: true) { "\($0.pingInterval)" },
        Setting(key: "idle_timeout", reloadable: true) { "\($0.idleTimeout)" },
        Setting(key: "drain_timeout", reloadable: true) { "\($0.drainTimeout)" },
        // Open connections keep what they agreed at their upgrade; new upgrades follow the switch.
        Setting(key: "compression", reloadable: true) { $0.compression ? "on" : "off" },
        Setting(key: "compression_min_bytes", reloadable: true) { "\($0.compressionMinimumBytes)" },
        // The files are read again on every reload: a renewed certificate at the same path counts.
        Setting(key: "tls_cert", reloadable: true) { $0.tls?.description ?? "off" },
        Setting(key: "admin_tls_cert", reloadable: true) { $0.adminTLS?.description ?? "off" },
        // Connections are counted per address only while the limit is on: turning it on later
        // would not count those already open.
        Setting(key: "max_connections_per_ip", reloadable: false) { "\($0.maxConnectionsPerAddress)" },
        Setting(key: "listen", reloadable: false) { "\($0.listen)" },
        Setting(key: "admin", reloadable: false) { "\($0.admin)" },
        Setting(key: "data", reloadable: false) { $0.dataDirectory },
        Setting(key: "redis", reloadable: false) { $0.redis?.description ?? "" },
        Setting(key: "redis_sentinel", reloadable: false) { $0.redisSentinels.map(\.description).joined(separator: ",") },
        Setting(key: "redis_master", reloadable: false) { $0.redisMaster ?? "" },
        Setting(key: "redis_ca", reloadable: false) { $0.redisTLS?.caFile ?? "" },
        Setting(key: "loops", reloadable: false) { "\($0.loops)" },
        Setting(key: "echo_path", reloadable: false) { $0.echoPath ?? "" },
        Setting(key: "dev", reloadable: false) { "\($0.dev)" },
        Setting(key: "allow_anonymous", reloadable: false) { "\($0.allowAnonymous)" },
        Setting(key: "keep_versions", reloadable: false) { "\($0.keepVersions)" },
        Setting(key: "webhook_queue", reloadable: false) { "\($0.webhookQueueLimit)" },
        Setting(key: "strict_components", reloadable: false) { "\($0.strictComponents)" },
        Setting(key: "jwt_issuer", reloadable: false) { $0.jwtIssuer ?? "" },
        Setting(key: "jwt_audience", reloadable: false) { $0.jwtAudience ?? "" },
        Setting(key: "jwt_require_exp", reloadable: false) { "\($0.requiresTokenExpiry)" },
        Setting(key: "jwt_public_key", reloadable: false) { $0.jwtPublicKeys.map(\.source).joined(separator: ",") },
        Setting(key: "jwt_jwks", reloadable: false) { $0.jwtJWKS?.description ?? "" },
    ]

    /// The config to run with after a reload to `new`, with the keys it changed and those that
    /// changed but wait for a restart.
    public static func applying(_ new: HubConfig, to running: HubConfig) -> (
        config: HubConfig, changed: [String], needRestart: [String]
    ) {
        var config = running
        config.maxConnections = new.maxConnections
        config.maxSubscriptions = new.maxSubscriptions
        config.clientMessageRate = new.clientMessageRate
        config.allowedOrigins = new.allowedOrigins
        config.handshakeTimeout = new.handshakeTimeout
        config.helloTimeout = new.helloTimeout
        config.pingInterval = new.pingInterval
        config.idleTimeout = new.idleTimeout
        config.drainTimeout = new.drainTimeout
        config.compression = new.compression
        config.compressionMinimumBytes = new.compressionMinimumBytes
        // A listener keeps its protocol until a restart: only a certificate for one already on TLS.
        if running.tls != nil, let tls = new.tls { config.tls = tls }
        if running.adminTLS != nil, let tls = new.adminTLS { config.adminTLS = tls }
        let differing = settings.filter { $0.show(new) != $0.show(running) }
        // Turning TLS on or off changes what a listener speaks: that waits for a restart.
        let protocolChanges = [
            (running.tls == nil) != (new.tls == nil) ? "tls_cert" : nil,
            (running.adminTLS == nil) != (new.adminTLS == nil) ? "admin_tls_cert" : nil,
        ].compactMap { $0 }
        let applied = differing.filter { $0.reloadable && !protocolChanges.contains($0.key) }.map(\.key)
        let waiting = differing.filter { !$0.reloadable }.map(\.key) + protocolChanges
        return (config, applied, waiting)
    }
}
