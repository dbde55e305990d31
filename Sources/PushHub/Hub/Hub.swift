/// A running hub: its state restored, its listeners bound, its loops started.
///
/// Invariants: `clientAddress`/`adminAddress` carry the bound ports (never 0); after
/// `shutdown` + `join`, every socket the hub opened is closed.
public final class Hub: Sendable {
    public let config: HubConfig
    public let clientAddress: SocketAddress
    public let adminAddress: SocketAddress
    public let metrics: Metrics
    public let secrets: DataDirectory.Secrets
    private let loops: LoopGroup
    /// Held for the life of the hub: one hub per data dir.
    private let dataLock: DataDirectoryLock

    /// Prepares the data dir and restores the state, binds the listeners (one client socket per
    /// loop with SO_REUSEPORT, one admin socket) and starts the loops.
    public init(config: HubConfig, notifier: ServiceNotifier? = nil) throws {
        self.config = config
        let directory = DataDirectory(path: config.dataDirectory)
        dataLock = try directory.lock()
        secrets = try directory.prepare()
        let metrics = Metrics(loops: config.effectiveLoops)
        self.metrics = metrics
        var clientListeners: [Listener] = []
        var client = config.listen
        try Listener.claim(client, flag: "--listen")
        try Listener.claim(config.admin, flag: "--admin")
        for _ in 0..<config.effectiveLoops {
            // The first bind of port 0 picks a free port; the other loops join that port.
            let listener = try Listener(binding: client, shared: true, defersAccept: true)
            client = listener.address
            clientListeners.append(listener)
        }
        let adminListener = try Listener(binding: config.admin)
        clientAddress = client
        adminAddress = adminListener.address
        // Client tokens (DESIGN §18): the secret and the PEM keys stay; the JWKS's keys are the
        // control plane's to swap in (read back from jwks.json first, when it is there).
        let keys = JWTKeyStore(
            JWTKeySet(configured: [JWTKey(secret: Array(secrets.jwtSecret.utf8))] + config.jwtPublicKeys),
            fetchesKeys: config.jwtJWKS != nil, metrics: metrics.jwt)
        let plane = try ControlPlane(
            config: config, metrics: metrics, adminToken: secrets.adminToken, jwtSecret: secrets.jwtSecret,
            clientAddress: client,
            dataDirectory: config.dataDirectory, keyStore: keys, notifier: notifier)
        loops = try LoopGroup(
            controlPlane: plane, config: config, metrics: metrics,
            tokens: JWTVerifier(
                keys: keys, issuer: config.jwtIssuer, audience: config.jwtAudience,
                requireExpiry: config.requiresTokenExpiry),
            clientListeners: clientListeners, adminListener: adminListener)
    }

    /// Applies the reloadable settings of `config` (`ConfigReload`) on every client loop.
    public func reconfigure(_ config: HubConfig) { loops.reconfigure(config) }

    /// Closes every client with 1001 and stops the loops once drained (or after `drain`).
    /// `/readyz` answers 503 from before any loop hears of it (`Metrics.draining`).
    public func shutdown(drain: Duration) {
        metrics.draining.store(true, ordering: .releasing)
        loops.shutdown(drain: drain)
    }

    /// Waits until every loop has exited.
    public func join() { loops.join() }
}
