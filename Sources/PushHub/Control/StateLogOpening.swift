import Glibc

/// Opens the log the configuration names and restores the state from it: the journal shared over
/// Redis (`--redis`), the data dir's journal (`--data`), or memory only.
struct OpenedStateLog {
    var log: any StateLog
    var peers: (any HubPeers)?
    /// Where the experiments' results are kept: beside the state (the data dir, or Redis).
    var results: any ResultsLog
    var state: HubState
    /// The identity of the state (`welcome.epoch`; `StateEpoch`).
    var epoch: String

    init(
        config: HubConfig, metrics: Metrics, adminToken: String, jwtSecret: String, clientAddress: SocketAddress,
        startedAt: Int, dataDirectory: String?
    ) throws {
        var restored = HubState(keepVersions: config.keepVersions, webhookQueueLimit: config.webhookQueueLimit)
        if let redis = config.redis {
            let hubID = Self.makeHubID(port: clientAddress.port)
            // Fingerprints of the secrets, compared with the other hubs' (`ClusterKeys`).
            let keys = ClusterKeys(jwtSecret: jwtSecret, adminToken: adminToken)
            let sentinel = try Self.locateMaster(config: config, hubID: hubID)
            let endpoint = RedisEndpoint(
                url: redis, locate: sentinel.map { located in { [unowned located] in located.master } },
                tls: config.redisTLS)
            let (applied, sharedEpoch) = try SharedStateLoad.load(
                endpoint: endpoint, hubID: hubID, keys: keys, waitingUpTo: .seconds(30), into: &restored)
            let journal = ClusterJournal(endpoint: endpoint, hubID: hubID, applied: applied, now: MonotonicClock.now())
            let shared = SharedLog(journal: journal, sentinel: sentinel, redis: redis, metrics: metrics)
            log = shared
            peers = ClusterPeers(
                log: shared, keys: keys, metrics: metrics, clientAddress: clientAddress, startedAt: startedAt)
            epoch = sharedEpoch
            results = SharedResultsLog(
                link: journal.commands, hubID: hubID, metrics: metrics, saltOf: Self.salts(of: restored))
            Log.info("loaded the shared state from Redis", [("redis", "\(redis)"), ("hub", hubID), ("entry", applied)])
            if !shared.connectNow(timeout: .seconds(10)) {
                Log.warning(
                    "Redis went away after the load; serving degraded, reconnecting",
                    [("reason", journal.notReadyReason)])
            }
        } else if let dataDirectory {
            epoch = try StateEpoch.ofDataDirectory(dataDirectory)
            let journal = try StateJournal(directory: dataDirectory)
            try journal.restore { restored.apply($0) }
            log = LocalLog(journal: journal, metrics: metrics)
            results = LocalResultsLog(dataDirectory: dataDirectory, metrics: metrics, saltOf: Self.salts(of: restored))
        } else {
            epoch = StateEpoch.make()
            log = LocalLog(journal: nil, metrics: metrics)
            results = LocalResultsLog(dataDirectory: nil, metrics: metrics, saltOf: { $0 })
        }
        state = restored
    }

    /// The salt each experiment has now: results lines written before they named theirs count there.
    private static func salts(of state: HubState) -> (String) -> String {
        let salts = state.view.experiments.all.mapValues(\.salt)
        return { salts[$0] ?? $0 }
    }

    /// Where Redis Sentinel says the master is (nil: no Sentinel configured).
    private static func locateMaster(config: HubConfig, hubID: String) throws -> SentinelLocator? {
        guard let master = config.redisMaster, !config.redisSentinels.isEmpty else { return nil }
        let located = SentinelLocator(
            sentinels: config.redisSentinels, masterName: master, hubID: hubID, now: MonotonicClock.now(),
            tls: config.redisTLS)
        guard located.locateNow(timeout: .seconds(30)) != nil else {
            let sentinels = config.redisSentinels.map(\.description).joined(separator: ",")
            throw SharedStateLoad.Failure(
                description: located.masterUnknown
                    ? "Sentinel at \(sentinels) monitors no master named \"\(master)\" (--redis-master)"
                    : "no sentinel of \(sentinels) named the master \"\(master)\" within 30 s (\(located.link.notReadyReason))")
        }
        return located
    }

    /// A name for this hub unique among those sharing a Redis: host, client port, random suffix.
    private static func makeHubID(port: UInt16) -> String {
        var name = [UInt8](repeating: 0, count: 256)
        let host = gethostname(&name, 255) == 0 ? String(decoding: name.prefix { $0 != 0 }, as: UTF8.self) : "hub"
        return "\(host):\(port):\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
    }
}
