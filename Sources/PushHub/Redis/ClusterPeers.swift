/// The other hubs sharing a Redis (DESIGN §11), reached over it: questions on
/// `ClusterWire.gatherChannel`, answers on each hub's own channel, who is live from the registry
/// (`HubRegistry`), and the check that they all hold the same secrets (`ClusterKeys`).
///
/// Both links are the shared journal's: a question or a live-hubs read goes out on the command
/// link after the entry it is about, which is what makes `expectLive` wait for every hub that
/// could have applied it.
final class ClusterPeers: HubPeers {
    private let log: SharedLog
    private let registry: HubRegistry
    private let keys: ClusterKeys
    private let metrics: Metrics
    private let clientAddress: SocketAddress
    /// When this hub started (Unix milliseconds).
    private let startedAt: Int
    var onQuestion: ((RemoteAsker, HubQuestion) -> Void)?
    var onAnswers: ((String, GatherID, [LoopAnswer]) -> Void)?

    private var journal: ClusterJournal { log.journal }
    private var hubID: String { journal.hubID }

    init(log: SharedLog, keys: ClusterKeys, metrics: Metrics, clientAddress: SocketAddress, startedAt: Int) {
        self.log = log
        self.keys = keys
        self.metrics = metrics
        self.clientAddress = clientAddress
        self.startedAt = startedAt
        registry = HubRegistry(hubID: log.journal.hubID)
        registry.onLive = { [unowned self] live in self.checkKeys(of: live) }
        log.liveHubs = { [unowned registry] in registry.live }
        log.journal.onMessage = { [unowned self] channel, payload in self.received(channel: channel, payload: payload) }
    }

    var isReachable: Bool { journal.isReady }

    func ask(_ question: HubQuestion, gather: GatherID, now: UInt64) {
        journal.publish(ClusterWire.gatherChannel, ClusterWire.request(from: hubID, id: gather, query: question), now: now)
    }

    func expectLive(now: UInt64, then: @escaping (Set<String>) -> Void) {
        journal.commands.send(HubRegistry.liveIDsCommand, now: now) { [unowned self] result in
            // A failed or odd reply is not an error to report: the last heartbeat's list stands in.
            let live = (try? result.get()).flatMap(HubRegistry.ids(in:)) ?? Set(registry.others)
            then(live.subtracting([hubID]))
        }
    }

    func answer(_ asker: RemoteAsker, _ answers: [LoopAnswer], now: UInt64) {
        journal.publish(
            ClusterWire.answersChannel(of: asker.hub), ClusterWire.answers(from: hubID, id: asker.gather, answers),
            now: now)
    }

    /// A message another hub published for this one: a question, or answers to one of its gathers.
    private func received(channel: String, payload: [UInt8]) {
        if channel == ClusterWire.gatherChannel {
            guard let (from, id, question) = ClusterWire.parseRequest(payload), from != hubID else { return }
            onQuestion?(RemoteAsker(hub: from, gather: id), question)
        } else if let (hub, id, answers) = ClusterWire.parseAnswers(payload) {
            onAnswers?(hub, id, answers)
        }
    }

    var latestStart: Int? { registry.live.compactMap { $0["started_at"]?.intValue }.max() }

    var leadsSharedWork: Bool { MonotonicClock.now() < registry.leadsUntil }

    func tick(now: UInt64) { registry.tick(now: now, link: journal.commands) { info } }

    var nextDeadline: UInt64 { registry.nextHeartbeat }

    func leave(now: UInt64) { registry.leave(now: now, link: journal.commands) }

    /// Hubs that started at the same moment each found no other live hub to compare secrets
    /// with; the first heartbeat that lists a hub with other secrets stops this one taking changes
    /// (as when Redis is away: it serves its clients from memory, and `/healthz` says degraded).
    private func checkKeys(of live: [JSONValue]) {
        guard log.fault == nil else { return }
        for entry in live {
            guard let hub = entry["hub"]?.stringValue, hub != hubID, let theirs = ClusterKeys(entry["keys"]),
                let difference = keys.difference(from: theirs, hub: hub)
            else { continue }
            return log.stopFollowing(difference)
        }
    }

    /// What this hub says about itself in the registry (`/v1/stats` "cluster.hubs").
    private var info: JSONValue {
        .object([
            "hub": .string(hubID), "client_listen": .string(clientAddress.description),
            "started_at": .number(Double(startedAt)), "entry": .number(Double(journal.applied)),
            "connections": .number(Double(metrics.webSocketConnections.load(ordering: .relaxed))),
            "sessions": .number(Double(metrics.sessions.load(ordering: .relaxed))),
            "subscriptions": .number(Double(metrics.subscriptions.load(ordering: .relaxed))),
            "keys": keys.json,
        ])
    }
}
