/// A running hub: its listeners bound, its loops started.
///
/// Invariants: `clientAddress`/`adminAddress` carry the bound ports (never 0); after
/// `shutdown` + `join`, every socket the hub opened is closed.
public final class Hub: Sendable {
    public let config: HubConfig
    public let clientAddress: SocketAddress
    public let adminAddress: SocketAddress
    public let metrics: Metrics
    public let secrets: DataDirectory.Secrets
    public let services: HubServices
    private let loops: LoopGroup

    /// Prepares the data dir, binds both listeners (one socket per loop with SO_REUSEPORT)
    /// and starts the loops.
    public init(config: HubConfig) throws {
        self.config = config
        secrets = try DataDirectory(path: config.dataDirectory).prepare()
        let metrics = Metrics()
        self.metrics = metrics
        let screens = try ScreenStore(dataDirectory: config.dataDirectory, keepVersions: config.keepVersions)
        let cohorts = try CohortStore(dataDirectory: config.dataDirectory)
        let syncs = try SyncLog(dataDirectory: config.dataDirectory)
        let experiments = try ExperimentStore(dataDirectory: config.dataDirectory)
        let loopCount = config.effectiveLoops
        var perLoop: [[(Listener, ListenerKind)]] = []
        var client = config.listen
        var admin = config.admin
        for _ in 0..<loopCount {
            // The first bind of port 0 picks a free port; the other loops join that port.
            let clientListener = try Listener(binding: client)
            let adminListener = try Listener(binding: admin)
            client = clientListener.address
            admin = adminListener.address
            perLoop.append([(clientListener, .client), (adminListener, .admin)])
        }
        clientAddress = client
        adminAddress = admin
        services = HubServices(
            config: config, metrics: metrics, screens: screens, adminToken: secrets.adminToken,
            clientAddress: client, cohorts: cohorts, syncs: syncs, jwtSecret: Array(secrets.jwtSecret.utf8),
            experiments: experiments, exposures: Exposures(dataDirectory: config.dataDirectory))
        loops = try LoopGroup(count: loopCount, services: services, listenersPerLoop: perLoop)
    }

    /// Closes every client with 1001 and stops the loops once drained (or after `drain`).
    public func shutdown(drain: Duration) { loops.shutdown(drain: drain) }

    /// Waits until every loop has exited.
    public func join() { loops.join() }

    /// Loop mailboxes, for posting work.
    public var mailboxes: [Mailbox] { loops.mailboxes }
}
