import Synchronization

/// What every loop shares: the config, the counters, the screen store, the subscriber counts,
/// and a way to post work to every loop.
///
/// Invariant: everything here is `Sendable` and safe to use from any loop; `loops` is set once,
/// before any loop runs.
public final class HubServices: Sendable {
    public let config: HubConfig
    public let metrics: Metrics
    public let screens: ScreenStore
    public let subscriberCounts = SubscriberCounts()
    public let cohorts: CohortStore
    public let syncs: SyncLog
    public let online = OnlineIndex()
    public let tokens: JWTVerifier
    public let experiments: ExperimentStore
    public let exposures: Exposures
    public let adminToken: String
    /// The bound client listener (its real port when configured with 0).
    public let clientAddress: SocketAddress
    private let mailboxes = Mutex<[Mailbox]>([])  // guarded by itself; set once by LoopGroup

    public init(
        config: HubConfig, metrics: Metrics, screens: ScreenStore, adminToken: String,
        clientAddress: SocketAddress? = nil, cohorts: CohortStore? = nil, syncs: SyncLog? = nil,
        jwtSecret: [UInt8] = [],
        experiments: ExperimentStore? = nil, exposures: Exposures? = nil
    ) {
        self.experiments = experiments ?? (try! ExperimentStore(dataDirectory: nil))
        self.exposures = exposures ?? Exposures(dataDirectory: nil)
        self.clientAddress = clientAddress ?? config.listen
        self.cohorts = cohorts ?? (try! CohortStore(dataDirectory: nil))
        self.syncs = syncs ?? (try! SyncLog(dataDirectory: nil))
        tokens = JWTVerifier(secret: jwtSecret, issuer: config.jwtIssuer, audience: config.jwtAudience)
        self.config = config
        self.metrics = metrics
        self.screens = screens
        self.adminToken = adminToken
        self.cohorts.attach(self.experiments)
    }

    func setMailboxes(_ list: [Mailbox]) { mailboxes.withLock { $0 = list } }

    /// Posts `command` to loop `index`.
    public func post(_ command: LoopCommand, toLoop index: Int) {
        let mailbox = mailboxes.withLock { $0.indices.contains(index) ? $0[index] : nil }
        mailbox?.post(command)
    }

    /// Posts `command` to every loop, this one included.
    public func broadcast(_ command: LoopCommand) {
        for mailbox in mailboxes.withLock({ $0 }) { mailbox.post(command) }
    }
}
