/// Finds the current Redis master through Redis Sentinel (DESIGN §11: `--redis-sentinel
/// host:port,… --redis-master NAME`; https://redis.io/docs/reference/sentinel-clients/).
///
/// One link to the sentinels, moving to the next sentinel whenever a connect fails; once it is
/// up, and every `interval` after, it asks `SENTINEL get-master-addr-by-name NAME`. The master
/// links connect to the last answer (`RedisConnection.Options.locate`) and check `ROLE` on
/// sign-in; when the answer changes (a failover) `onMove` drops them so they connect to the new
/// master.
///
/// Invariant: `master` is what a sentinel last answered (nil before the first answer, and when
/// no sentinel knows the name).
final class SentinelLocator {
    let sentinels: [SocketAddress]
    let masterName: String
    let link: RedisConnection
    private(set) var master: SocketAddress?
    /// Called when the master moved, with its new address.
    var onMove: ((SocketAddress) -> Void)?
    private var nextQuery: UInt64 = 0
    private var asking = false
    /// A sentinel answered that it monitors no master of this name.
    private(set) var masterUnknown = false
    static let interval: UInt64 = 1_000_000_000

    /// - Parameter tls: TLS to the sentinels too (with `rediss://`).
    init(sentinels: [SocketAddress], masterName: String, hubID: String, now: UInt64, tls: TLSClientContext? = nil) {
        precondition(!sentinels.isEmpty, "at least one sentinel")
        self.sentinels = sentinels
        self.masterName = masterName
        var options = RedisConnection.Options(
            url: RedisURL(host: sentinels[0].host, port: Int(sentinels[0].port)), clientName: "pushhub:\(hubID):sentinel")
        options.backoff = Backoff(initial: .milliseconds(50), cap: .seconds(1))
        options.commandTimeout = 1_000_000_000
        options.tls = tls
        var next = 0
        options.locate = {
            // Each attempt goes to the next sentinel: one that is down is passed over.
            defer { next = (next + 1) % sentinels.count }
            return sentinels[next]
        }
        link = RedisConnection(options: options, now: now)
        link.onReady = { [unowned self] in self.nextQuery = 0 }
    }

    deinit { link.close() }

    /// When the next query is due (nil while no sentinel is connected: the link's own deadline).
    var nextDeadline: UInt64? { link.isReady ? max(nextQuery, 1) : nil }

    /// Asks the sentinel when a query is due.
    func tick(now: UInt64) {
        guard link.isReady, !asking, now >= nextQuery else { return }
        asking = true
        nextQuery = now + Self.interval
        link.send(RedisCommand("SENTINEL", ["get-master-addr-by-name", masterName], label: "SENTINEL get-master-addr-by-name"), now: now) {
            [unowned self] result in
            asking = false
            switch result {
            case .success(let reply):
                guard let parts = reply.elements, parts.count == 2, let host = parts[0].string,
                    let port = parts[1].string.flatMap(UInt16.init)
                else {
                    masterUnknown = true
                    Log.warning("Sentinel does not know the master", [("master", masterName), ("sentinel", "\(link.address)")])
                    return
                }
                masterUnknown = false
                let address = SocketAddress(host: host, port: port)
                guard address != master else { return }
                let previous = master
                master = address
                if previous != nil {
                    Log.info("Sentinel reports a new master", [("master", masterName), ("address", "\(address)")])
                    onMove?(address)
                }
            case .failure(let error):
                Log.warning("asking Sentinel for the master failed", [("error", "\(error)")])
            }
        }
    }

    /// Asks the sentinels until one answers, blocking (a hub's start, before its loops run);
    /// gives up at once when a sentinel does not know the name (a typo will not heal).
    func locateNow(timeout: Duration) -> SocketAddress? {
        let driver = PollDriver([link])
        driver.run(for: timeout) {
            tick(now: MonotonicClock.now())
            return master != nil || masterUnknown
        }
        return master
    }
}

@available(*, unavailable)
extension SentinelLocator: Sendable {}
