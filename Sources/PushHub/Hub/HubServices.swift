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
    public let adminToken: String
    /// The bound client listener (its real port when configured with 0).
    public let clientAddress: SocketAddress
    private let mailboxes = Mutex<[Mailbox]>([])  // guarded by itself; set once by LoopGroup

    public init(
        config: HubConfig, metrics: Metrics, screens: ScreenStore, adminToken: String,
        clientAddress: SocketAddress? = nil
    ) {
        self.clientAddress = clientAddress ?? config.listen
        self.config = config
        self.metrics = metrics
        self.screens = screens
        self.adminToken = adminToken
    }

    func setMailboxes(_ list: [Mailbox]) { mailboxes.withLock { $0 = list } }

    /// Posts `command` to every loop, this one included.
    public func broadcast(_ command: LoopCommand) {
        for mailbox in mailboxes.withLock({ $0 }) { mailbox.post(command) }
    }
}
