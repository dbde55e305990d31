import Glibc

/// The hub's one writer (DESIGN §9, STYLE §7): it owns all mutable hub state and every durable
/// write, and runs the admin API. It lives on its own loop thread (with the admin listener), so
/// an admin request, an fsync or a snapshot rewrite never runs on a client loop.
///
/// A tick of its loop reads every admin request that arrived, applies each mutation to `state`
/// at once (so the next request in the same tick sees it) and encodes its record; at the end of
/// the tick `commit()` writes them all with one fsync (group commit), and only then sends each
/// change to every client loop, in record order, and answers. A failed write undoes the whole
/// batch (`state` goes back to `committed`) and answers every request in it 500.
///
/// Scaled out over Redis (`cluster` set, DESIGN §11), "durable" means "appended to the shared
/// journal" instead: the tick's batch goes to Redis as the next entry (`ClusterJournal`), at most
/// one batch at a time; a batch another hub beat to that entry is taken back, the entries it
/// missed are applied, and its admin requests run again against the new state. Entries from
/// other hubs are applied as they are announced (and polled every second).
///
/// Invariants: `committed` is the state as of the last durable record (scaled out: as of the
/// last journal entry applied); every change a loop applies was durable first; changes reach
/// every loop in the order of their records.
final class ControlPlane {
    let config: HubConfig
    let metrics: Metrics
    let adminToken: String
    /// Fingerprints of the JWT secret and admin token, compared with the other hubs' (`ClusterKeys`).
    let keys: ClusterKeys
    /// The bound client listener (its real port when configured with 0).
    let clientAddress: SocketAddress
    private(set) var state: HubState
    private var committed: HubState
    private let journal: StateJournal?
    /// Scale-out: the shared journal in Redis (nil: the data dir's journal).
    let cluster: ClusterJournal?
    /// This hub's name among the hubs sharing the Redis (DESIGN §11).
    let hubID: String
    /// The identity of the state this hub serves (`welcome.epoch`; `StateEpoch`).
    let epoch: String
    private var replication = Replication.idle
    /// Mutations to make again once the entries another hub appended first are applied.
    private var awaitingCatchUp: [Mutation] = []
    /// Set when another hub announced an entry: fetch at the end of the tick.
    private var entriesAnnounced = false
    private var nextJournalPoll: UInt64 = 0
    /// Why the shared journal cannot be followed (nil: it can); the hub then serves from memory.
    private(set) var clusterFault: String?
    /// Scale-out: the live hubs, by heartbeat.
    let registry: HubRegistry?
    /// Scale-out with Redis Sentinel: where the master is.
    let sentinel: SentinelLocator?
    private let startedAt = WallClock.nowMilliseconds()
    /// Set by `stopped()`: the Redis links close because we close them, not because Redis went away.
    private var isStopping = false
    let exposures: Exposures
    /// The audit log's recent entries (`GET /v1/audit`); on this thread only, like `state`.
    var audit = AuditRing()
    /// The client loops' mailboxes; set once before any loop runs.
    private var loops: [Mailbox] = []
    private var uncommitted: [Mutation] = []
    private var gathers: [GatherID: Gather] = [:]
    /// Renditions and frames derived here; what a publish prepares is sent to the loops with it.
    var renditions = RenditionCache()
    /// Per screen, the render targets some loop's subscribers see it as, with how many loops.
    private var targetsInUse: [String: [RenderTarget: Int]] = [:]
    private var nextGatherID: GatherID = 1
    private var reclaimer = MemoryReclaimer(now: MonotonicClock.now())
    /// systemd's watchdog, pinged from this loop's ticks (nil: not asked for).
    private let notifier: ServiceNotifier?
    private var watchdogDue: UInt64?
    /// How long a scatter-gather waits for a loop before answering with what it has.
    static let gatherTimeout: UInt64 = 2_000_000_000

    /// A mutation waiting for its fsync: its records and changes, whether its last change asks
    /// the loops for answers, what to do once they are in (or once it failed), and how to make
    /// it again against a newer state (scaled out; nil: it cannot be).
    private struct Mutation {
        var records: [HubRecord]
        var changes: [HubChange]
        var gathers: Bool
        var done: (Result<[LoopAnswer], AdminError>) -> Void
        var retry: (() -> Void)?
        /// Which of `records` made the last change (the one a gathering mutation asks about).
        var lastChangeRecord: Int?
        /// Scaled out: the gather started when the batch was sent, so that other hubs' answers
        /// find it whenever they arrive.
        var gatherID: GatherID?
    }

    /// Where the shared journal's one outstanding request stands (scaled out).
    private enum Replication {
        case idle
        /// A batch sent as the next entry, with the state it leads to.
        case appending(mutations: [Mutation], state: HubState, started: UInt64)
        case fetching
    }

    /// How often a scaled-out hub reads the shared journal without a notice (a notice can be
    /// lost while the notice link reconnects).
    static let journalPollInterval: UInt64 = 1_000_000_000
    /// Every this many entries, the hub that appended one writes the shared snapshot.
    static let sharedSnapshotEvery = 1000

    /// Restores the state from `dataDirectory` (nil: in memory, for tests).
    init(
        config: HubConfig, metrics: Metrics, adminToken: String, jwtSecret: String = "", clientAddress: SocketAddress,
        dataDirectory: String?, notifier: ServiceNotifier? = nil
    ) throws {
        keys = ClusterKeys(jwtSecret: jwtSecret, adminToken: adminToken)
        self.notifier = notifier
        watchdogDue = notifier?.watchdogInterval.map { MonotonicClock.now() + $0 }
        self.config = config
        self.metrics = metrics
        self.adminToken = adminToken
        self.clientAddress = clientAddress
        var restored = HubState(keepVersions: config.keepVersions)
        hubID = Self.makeHubID(port: clientAddress.port)
        if let redis = config.redis {
            var locate: (() -> SocketAddress?)?
            if let master = config.redisMaster, !config.redisSentinels.isEmpty {
                let located = SentinelLocator(
                    sentinels: config.redisSentinels, masterName: master, hubID: hubID, now: MonotonicClock.now(),
                    tls: config.redisTLS)
                guard located.locateNow(timeout: .seconds(30)) != nil else {
                    let sentinels = config.redisSentinels.map(\.description).joined(separator: ",")
                    throw SharedStateLoad.Failure(
                        description: located.masterUnknown
                            ? "Sentinel at \(sentinels) monitors no master named \"\(master)\" (--redis-master)"
                            : "no sentinel of \(sentinels) named the master \"\(master)\" within 30 s (\(located.link.lastError))")
                }
                sentinel = located
                locate = { [unowned located] in located.master }
            } else {
                sentinel = nil
            }
            let endpoint = RedisEndpoint(url: redis, locate: locate, tls: config.redisTLS)
            let (applied, sharedEpoch) = try SharedStateLoad.load(
                endpoint: endpoint, hubID: hubID, keys: keys, waitingUpTo: .seconds(30), into: &restored)
            epoch = sharedEpoch
            cluster = ClusterJournal(endpoint: endpoint, hubID: hubID, applied: applied, now: MonotonicClock.now())
            registry = HubRegistry(hubID: hubID)
            journal = nil
            Log.info("loaded the shared state from Redis", [("redis", "\(redis)"), ("hub", hubID), ("entry", applied)])
        } else if let dataDirectory {
            epoch = try StateEpoch.ofDataDirectory(dataDirectory)
            let journal = try StateJournal(directory: dataDirectory)
            try journal.restore { restored.apply($0) }
            self.journal = journal
            cluster = nil
            registry = nil
            sentinel = nil
        } else {
            epoch = StateEpoch.make()
            journal = nil
            cluster = nil
            registry = nil
            sentinel = nil
        }
        state = restored
        committed = restored
        exposures = Exposures(dataDirectory: dataDirectory, metrics: metrics)
        if cluster != nil { metrics.redisUp.store(0, ordering: .relaxed) }  // until the link is ready
        cluster?.onNotice = { [unowned self] in self.entriesAnnounced = true }
        sentinel?.onMove = { [unowned self] address in
            self.cluster?.reconnect(because: "Sentinel moved the master to \(address)", now: MonotonicClock.now())
        }
        cluster?.onMessage = { [unowned self] channel, payload in self.clusterMessage(channel: channel, payload: payload) }
        registry?.onLive = { [unowned self] live in self.checkKeys(of: live) }
        cluster?.commands.onDown = { [unowned self, metrics] reason in
            metrics.redisUp.store(0, ordering: .relaxed)
            guard !self.isStopping else { return }  // our own close at a clean stop is no fault
            // The notice link has no replies to wait for, so nothing else tells that it is dead.
            self.cluster?.notices.reconnect(because: "the command link went down", now: MonotonicClock.now())
            Log.error("lost the connection to Redis; serving clients from memory, refusing changes", [("reason", reason)])
        }
        cluster?.commands.onReady = { [unowned self, metrics] in
            metrics.redisUp.store(1, ordering: .relaxed)
            Log.info("connected to Redis", [("hub", hubID)])
            self.entriesAnnounced = true
        }
    }

    /// A name for this hub unique among those sharing a Redis: host, client port, random suffix.
    private static func makeHubID(port: UInt16) -> String {
        var name = [UInt8](repeating: 0, count: 256)
        let host = gethostname(&name, 255) == 0 ? String(decoding: name.prefix { $0 != 0 }, as: UTF8.self) : "hub"
        return "\(host):\(port):\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
    }

    /// What the control plane's loop drives besides the admin connections: the Redis links.
    var loopSources: [LoopSource] {
        (cluster.map { [$0.commands, $0.notices] } ?? []) + (sentinel.map { [$0.link] } ?? [])
    }

    /// Called once the loop has stopped: leaves the hub registry, closes the Redis links.
    func stopped() {
        guard let cluster else { return }
        isStopping = true
        let now = MonotonicClock.now()
        registry?.leave(now: now, link: cluster.commands)
        cluster.commands.tick(now: now)  // writes what is queued; the replies are not awaited
        cluster.close()
        sentinel?.link.close()
    }

    func attach(loops mailboxes: [Mailbox]) { loops = mailboxes }

    // MARK: - Mutations

    /// Applies `records` now and makes them durable at the end of the tick; then sends their
    /// changes to every loop and calls `done` — with the loops' answers to the last change when
    /// `gathering` (a publish's reach, a sync's targets).
    /// - Parameter retry: how to make the change again against a newer state when its batch lost
    ///   the race for the shared journal's next entry (nil: it cannot be; it is answered 409).
    func mutate(
        _ records: [HubRecord], gathering: Bool = false, retry: (() -> Void)?,
        done: @escaping (Result<[LoopAnswer], AdminError>) -> Void
    ) {
        var changes: [HubChange] = []
        var lastChangeRecord: Int?
        for (index, record) in records.enumerated() {
            journal?.append(record)
            if let change = state.apply(record) {
                changes.append(change)
                lastChangeRecord = index
            }
        }
        uncommitted.append(
            Mutation(
                records: records, changes: changes, gathers: gathering && !changes.isEmpty, done: done,
                retry: retry, lastChangeRecord: lastChangeRecord))
    }

    /// Called by the loop at the end of every tick: one fsync for the tick's mutations, then
    /// their effects in order; expired gathers answer with what they have.
    func tickEnded(now: UInt64) {
        if let cluster {
            if !uncommitted.isEmpty { replicate(now: now) }
            followJournal(now: now)
            registry?.tick(now: now, link: cluster.commands) { hubInfo }
            sentinel?.tick(now: now)
            cluster.tick(now: now)
        } else if !uncommitted.isEmpty {
            commit(now: now)
        }
        for (id, gather) in gathers where now >= gather.deadline {
            gathers[id] = nil
            gather.expire()
        }
        if let due = watchdogDue, now >= due, let notifier, let interval = notifier.watchdogInterval {
            notifier.notify("WATCHDOG=1")
            watchdogDue = now + interval
        }
        if let held = reclaimer.check(now: now) {
            metrics.memoryTrims.add(1, ordering: .relaxed)
            metrics.memoryTrimmedBytes.add(held, ordering: .relaxed)
        }
    }

    /// Nothing waits to be made durable (scaled out: nor is a batch being appended or taken back).
    var uncommittedIsEmpty: Bool {
        guard uncommitted.isEmpty else { return false }
        if case .idle = replication { return true }
        return false
    }

    /// The earliest gather deadline, memory check or watchdog ping, for the loop's wait.
    var nextDeadline: UInt64? {
        min(
            gathers.values.map(\.deadline).min() ?? .max, reclaimer.nextCheck, watchdogDue ?? .max,
            cluster == nil ? .max : nextJournalPoll, registry?.nextHeartbeat ?? .max, sentinel?.nextDeadline ?? .max,
            cluster?.nextNoticePing ?? .max)
    }

    private func commit(now: UInt64) {
        let batch = uncommitted
        uncommitted.removeAll(keepingCapacity: true)
        if let journal {
            let started = MonotonicClock.now()
            do {
                let count = try journal.commit()
                metrics.noteCommit(records: count, nanoseconds: MonotonicClock.now() - started)
            } catch {
                metrics.persistFailures.add(1, ordering: .relaxed)
                Log.error("a write to the journal failed; the batch is refused", [("error", "\(error)")])
                state = committed
                let refusal = AdminError(503, "storage_failed", "the change could not be made durable: \(error)")
                for mutation in batch { mutation.done(.failure(refusal)) }
                return
            }
        }
        committed = state
        deliver(batch, now: now)
        if let journal, journal.isSnapshotDue {
            do {
                try journal.writeSnapshot(committed.snapshotRecords())
            } catch {
                // The journal still holds every record: nothing is lost, the next commit retries.
                metrics.persistFailures.add(1, ordering: .relaxed)
                Log.error("writing a snapshot failed", [("error", "\(error)")])
            }
        }
    }

    /// Sends each durable mutation's changes to the loops in order, then answers it (once the
    /// loops answered, for a gathering one).
    private func deliver(_ batch: [Mutation], now: UInt64) {
        for mutation in batch {
            for (index, plain) in mutation.changes.enumerated() {
                let change = prepared(plain)
                if mutation.gathers && index == mutation.changes.count - 1 {
                    let done = mutation.done
                    let id = mutation.gatherID ?? startGather(now: now) { answers, _ in done(.success(answers)) }
                    broadcast(change, reply: id)
                } else {
                    broadcast(change, reply: nil)
                }
            }
            if !mutation.gathers { mutation.done(.success([])) }
        }
    }

    /// A publish with its renditions rendered and its patch from the previous version encoded
    /// for every render target in use (so the loops find them ready); other changes as they are.
    private func prepared(_ change: HubChange) -> HubChange {
        switch change {
        case .screenPublished(let version, _):
            let kept = committed.view.screens[version.name] ?? []
            let previous = kept.firstIndex { $0 === version }.flatMap { $0 > 0 ? kept[$0 - 1] : nil }
            // The up-to-date rendition is rendered for the admin answer's hash; frames are encoded
            // only for the targets some loop's subscribers use.
            _ = renditions.rendered(version, for: .latest)
            let entry = renditions.prepare(
                version, from: previous, for: targetsInUse[version.name].map { Array($0.keys) } ?? [])
            renditions.forget(screen: version.name, keeping: kept)
            return .screenPublished(version, prepared: entry)
        case .screenDeleted(let name):
            renditions.forget(screen: name, keeping: [])
            return change
        case .cohortChanged, .experimentsChanged, .stickyRecorded, .syncAppended:
            return change
        }
    }

    /// The hash of `version` as an up-to-date client sees it (what admin answers report).
    func latestHash(_ version: ScreenVersion) -> String { renditions.rendered(version, for: .latest).hash }

    private func broadcast(_ change: HubChange, reply: GatherID?) {
        for mailbox in loops { mailbox.post(.change(change, reply: reply)) }
    }

    // MARK: - Scatter-gather

    /// Asks every client loop `query` — scaled out, every other live hub's loops too; `finish`
    /// gets the answers (all of them, unless a loop or hub did not answer within
    /// `gatherTimeout`: then `complete` is false).
    func gather(_ query: LoopQuery, now: UInt64, finish: @escaping (_ answers: [LoopAnswer], _ complete: Bool) -> Void) {
        let asksHubs = cluster?.isReady == true
        let id = startGather(now: now, remote: asksHubs ? nil : [], finish: finish)
        for mailbox in loops { mailbox.post(.query(query, reply: id)) }
        if asksHubs {
            expectLiveHubs(in: [id], now: now)
            cluster?.publish(
                ClusterWire.gatherChannel, ClusterWire.request(from: hubID, id: id, query: .loops(query)), now: now)
        }
    }

    /// The receipts of the syncs numbered `seqs` — scaled out, summed over every live hub.
    func gatherReceipts(seqs: [Int], now: UInt64, finish: @escaping ([Int: ReceiptCounts]) -> Void) {
        let own = localReceipts(seqs)
        guard let cluster, cluster.isReady else { return finish(own) }
        let id = startGather(now: now, loops: false, remote: nil) { answers, _ in
            var total = own
            for case .receipts(let counts) in answers { total.merge(counts, uniquingKeysWith: +) }
            finish(total)
        }
        expectLiveHubs(in: [id], now: now)
        cluster.publish(
            ClusterWire.gatherChannel, ClusterWire.request(from: hubID, id: id, query: .receipts(seqs: seqs)), now: now)
    }

    private func localReceipts(_ seqs: [Int]) -> [Int: ReceiptCounts] {
        let wanted = Set(seqs)
        var counts: [Int: ReceiptCounts] = [:]
        for sync in state.view.syncs.syncs where wanted.contains(sync.seq) { counts[sync.seq] = sync.receipts.counts }
        return counts
    }

    /// Starts a gather awaiting every client loop (unless `loops` is false) and the other hubs
    /// in `remote` (nil: learnt from Redis, `expectLiveHubs`).
    private func startGather(
        now: UInt64, loops includeLoops: Bool = true, remote: Set<String>? = [],
        finish: @escaping ([LoopAnswer], Bool) -> Void
    ) -> GatherID {
        let id = nextGatherID
        nextGatherID += 1
        let loopCount = includeLoops ? loops.count : 0
        if loopCount == 0 && remote?.isEmpty == true {
            finish([], true)
        } else {
            gathers[id] = Gather(loops: loopCount, remote: remote, deadline: now + Self.gatherTimeout, finish: finish)
        }
        return id
    }

    /// Asks Redis which hubs are live now and makes the gathers `ids` wait for those (besides
    /// this one). Sent on the command link after what was sent before it (the question, or the
    /// entry they answer about), so every hub live when that went out is waited for. Without an
    /// answer, the registry's list as of the last heartbeat stands in.
    private func expectLiveHubs(in ids: [GatherID], now: UInt64) {
        guard let cluster, !ids.isEmpty else { return }
        cluster.commands.send(HubRegistry.liveIDsCommand, now: now) { [unowned self] result in
            // A failed or odd reply is not an error to report: the last heartbeat's list stands in.
            let live = (try? result.get()).flatMap(HubRegistry.ids(in:)) ?? Set(self.registry?.others ?? [])
            let others = live.subtracting([self.hubID])
            for id in ids {
                if let gather = self.gathers[id], gather.expectRemote(others) { self.gathers[id] = nil }
            }
        }
    }

    // MARK: - Events from the loops

    func received(_ event: LoopEvent) {
        switch event {
        case .answer(let id, let answer):
            if let gather = gathers[id], gather.add(answer) { gathers[id] = nil }
        case .stickyAssigned(let experiment, let unit, let variant):
            // First writer wins: a later assignment of the same unit (another loop that had not yet
            // heard of the first) is dropped, and the recorded one reaches that loop too. Scaled
            // out, the same holds across hubs: a batch that lost the race runs this again.
            guard state.view.experiments.all[experiment] != nil, state.view.sticky[experiment]?[unit] == nil else {
                return
            }
            let retry = { [unowned self] in self.received(event) }
            mutate([.stickyAssigned(experiment: experiment, unit: unit, variant: variant)], retry: retry) { result in
                if case .failure(let error) = result {
                    Log.error("a sticky assignment could not be made durable", [("error", error.message)])
                }
            }
        case .exposure(let exposure):
            exposures.record(exposure)
        case .targetInUse(let screen, let target, let inUse):
            let loops = (targetsInUse[screen]?[target] ?? 0) + (inUse ? 1 : -1)
            targetsInUse[screen, default: [:]][target] = loops > 0 ? loops : nil
            if targetsInUse[screen]?.isEmpty == true { targetsInUse[screen] = nil }
        }
    }
}

@available(*, unavailable)
extension ControlPlane: Sendable {}

// MARK: - Scale-out: the shared journal (DESIGN §11)

extension ControlPlane {
    /// Sends the tick's mutations to Redis as the next journal entry, unless an entry is already
    /// being appended or read (then they wait for the next tick).
    fileprivate func replicate(now: UInt64) {
        guard let cluster, case .idle = replication else { return }
        let batch = uncommitted
        uncommitted.removeAll(keepingCapacity: true)
        let records = batch.flatMap(\.records)
        if records.isEmpty {
            // Reads waiting for earlier changes: nothing is in flight, so the state is settled.
            deliver(batch, now: now)
            return
        }
        if let clusterFault {
            state = committed
            return refuse(batch, AdminError(503, "shared_state_unavailable", "\(clusterFault); the change was not made"))
        }
        guard cluster.isReady else {
            state = committed
            return refuse(
                batch,
                AdminError(
                    503, "redis_unavailable",
                    "Redis is unreachable (\(cluster.lastError)); the change was not made. This hub keeps serving its "
                        + "clients and reconnects; retry"))
        }
        // Gathering mutations start their gathers now: other hubs answer once they applied the
        // entry, which may be before this hub hears that its append succeeded.
        var sent = batch
        var gathersByRecord: [(record: Int, id: GatherID)] = []
        var offset = 0
        for index in sent.indices {
            defer { offset += sent[index].records.count }
            guard sent[index].gathers, let record = sent[index].lastChangeRecord else { continue }
            let done = sent[index].done
            let id = startGather(now: now, remote: nil) { answers, _ in done(.success(answers)) }
            // Not before the batch is durable: an answer must never go out for a change that fails.
            gathers[id]?.deadline = .max
            sent[index].gatherID = id
            gathersByRecord.append((offset + record, id))
        }
        replication = .appending(mutations: sent, state: state, started: MonotonicClock.now())
        cluster.append(records, gathers: gathersByRecord, now: now) { [unowned self] outcome in
            self.appended(outcome, records: records.count)
        }
        expectLiveHubs(in: gathersByRecord.map(\.id), now: now)
    }

    private func appended(_ outcome: ClusterJournal.AppendOutcome, records: Int) {
        guard case .appending(let batch, let after, let started) = replication else {
            preconditionFailure("an append answered while none was outstanding")
        }
        replication = .idle
        let now = MonotonicClock.now()
        // Mutations that arrived meanwhile were made on top of the batch's state.
        let later = uncommitted
        switch outcome {
        case .appended(let lsn):
            metrics.noteCommit(records: records, nanoseconds: now - started)
            for mutation in batch {
                if let id = mutation.gatherID { gathers[id]?.deadline = now + Self.gatherTimeout }
            }
            committed = after
            deliver(batch, now: now)
            if lsn % Self.sharedSnapshotEvery == 0 {
                cluster?.writeSnapshot(committed.snapshotRecords(), lsn: lsn, now: now)
            }
        case .conflict:
            // Another hub took the entry: take the batch back, read what it appended, run again.
            metrics.redisConflicts.add(1, ordering: .relaxed)
            dropGathers(of: batch)
            uncommitted.removeAll()
            state = committed
            awaitingCatchUp += batch + later
            readJournal(now: now)
        case .failed(let error):
            metrics.persistFailures.add(1, ordering: .relaxed)
            dropGathers(of: batch)
            uncommitted.removeAll()
            state = committed
            Log.error("appending to the shared journal failed", [("error", "\(error)")])
            let message =
                error.outcomeUnknown
                ? "Redis did not confirm the change (\(error)); it may or may not have been made: read it back "
                    + "before retrying"
                : "Redis refused the change (\(error)); it was not made"
            refuse(batch, AdminError(503, "redis_unavailable", message))
            if error.outcomeUnknown { entriesAnnounced = true }
            rerun(later)
        }
    }

    /// Reads the journal when another hub announced an entry, and every `journalPollInterval`.
    fileprivate func followJournal(now: UInt64) {
        guard case .idle = replication, clusterFault == nil else { return }
        guard entriesAnnounced || now >= nextJournalPoll else { return }
        readJournal(now: now)
    }

    private func readJournal(now: UInt64) {
        guard let cluster else { return }
        entriesAnnounced = false
        nextJournalPoll = now + Self.journalPollInterval
        guard case .idle = replication, cluster.isReady else {
            // Once connected again (`onReady` announces) the read happens; meanwhile requests that
            // lost a race cannot be made again.
            refuseAwaitingCatchUp(Self.redisUnavailable("Redis is unreachable (\(cluster.lastError))"))
            return
        }
        replication = .fetching
        cluster.fetch(now: now) { [unowned self] outcome in self.fetched(outcome) }
    }

    private func fetched(_ outcome: ClusterJournal.FetchOutcome) {
        replication = .idle
        let now = MonotonicClock.now()
        switch outcome {
        case .entries(let entries, let more):
            if !entries.isEmpty { applyReplicated(entries, now: now) }
            if more { return readJournal(now: now) }
            let stale = awaitingCatchUp
            awaitingCatchUp.removeAll()
            rerun(stale)
        case .gap(let expected, let found):
            Log.warning(
                "the shared journal no longer holds the next entry: reloading the shared snapshot",
                [("entry", expected), ("stream_starts_at", found)])
            reloadSnapshot(now: now)
        case .undecodable(let lsn, let reason):
            stopFollowing("journal entry \(lsn) in Redis cannot be applied (\(reason)); is a newer PushHub writing to it?")
        case .failed(let error):
            entriesAnnounced = true
            refuseAwaitingCatchUp(Self.redisUnavailable("reading the shared journal failed (\(error))"))
        }
    }

    /// Replaces the state with the shared snapshot (this hub fell behind the trimmed stream) and
    /// brings the loops to it with the changes between (`HubState.changes(toReach:)`); then reads
    /// the entries after it.
    private func reloadSnapshot(now: UInt64) {
        guard let cluster else { return }
        replication = .fetching
        cluster.readSnapshot(now: now) { [unowned self] result in
            replication = .idle
            let now = MonotonicClock.now()
            switch result {
            case .failure(.unreadable(let reason)):
                stopFollowing("the shared snapshot cannot be applied (\(reason)); is a newer PushHub writing to it?")
            case .failure(.redis(let error)):
                entriesAnnounced = true  // read again; the requests waiting for it cannot be made meanwhile
                Log.error("reloading the shared snapshot failed", [("error", "\(error)")])
                refuseAwaitingCatchUp(Self.redisUnavailable("reading the shared snapshot failed (\(error))"))
            case .success(let snapshot) where snapshot.lsn < cluster.applied:
                stopFollowing(
                    "the shared journal was trimmed past entry \(cluster.applied) but the shared snapshot is older "
                        + "(entry \(snapshot.lsn))")
            case .success(let snapshot):
                var fresh = HubState(keepVersions: committed.keepVersions)
                for record in snapshot.records { fresh.apply(record) }
                let (changes, target) = committed.changes(toReach: fresh)
                awaitingCatchUp += uncommitted
                uncommitted.removeAll()
                committed = target
                state = committed
                cluster.advance(to: snapshot.lsn)
                metrics.redisSnapshotReloads.add(1, ordering: .relaxed)
                Log.info("reloaded the shared snapshot", [("entry", snapshot.lsn), ("changes", changes.count)])
                for change in changes { broadcast(prepared(change), reply: nil) }
                readJournal(now: now)
            }
        }
    }

    /// Applies entries other hubs appended: they come before anything made here since, so the
    /// speculative mutations are taken back and made again after them.
    private func applyReplicated(_ entries: [ClusterJournal.Entry], now: UInt64) {
        guard let cluster else { return }
        awaitingCatchUp += uncommitted
        uncommitted.removeAll()
        // Each change, with the hub waiting for this hub's answers to it (and its gather).
        var changes: [(HubChange, asker: (hub: String, id: GatherID)?)] = []
        for entry in entries {
            for (index, record) in entry.records.enumerated() {
                guard let change = committed.apply(record) else { continue }
                let asker = entry.gathers[index].flatMap { entry.hub == hubID ? nil : (entry.hub, $0) }
                changes.append((change, asker))
            }
            cluster.advance(to: entry.lsn)
        }
        state = committed
        metrics.redisEntriesApplied.add(entries.count, ordering: .relaxed)
        for (change, asker) in changes {
            var reply: GatherID?
            if let asker {
                reply = startGather(now: now) { [unowned self] answers, _ in
                    self.cluster?.publish(
                        ClusterWire.answersChannel(of: asker.hub),
                        ClusterWire.answers(from: self.hubID, id: asker.id, answers), now: MonotonicClock.now())
                }
            }
            broadcast(prepared(change), reply: reply)
        }
    }

    /// Forgets the gathers a batch started (it will not be delivered as sent).
    private func dropGathers(of batch: [Mutation]) {
        for mutation in batch { if let id = mutation.gatherID { gathers[id] = nil } }
    }

    /// A message another hub published for this one: a query for its loops, or answers to one of
    /// its gathers.
    fileprivate func clusterMessage(channel: String, payload: [UInt8]) {
        let now = MonotonicClock.now()
        if channel == ClusterWire.gatherChannel {
            guard let (from, id, query) = ClusterWire.parseRequest(payload), from != hubID else { return }
            let answer = { [unowned self] (answers: [LoopAnswer]) in
                self.cluster?.publish(
                    ClusterWire.answersChannel(of: from), ClusterWire.answers(from: self.hubID, id: id, answers),
                    now: MonotonicClock.now())
            }
            switch query {
            case .loops(let query):
                let local = startGather(now: now) { answers, _ in answer(answers) }
                for mailbox in loops { mailbox.post(.query(query, reply: local)) }
            case .receipts(let seqs):
                answer([.receipts(localReceipts(seqs))])
            }
        } else if let (hub, id, answers) = ClusterWire.parseAnswers(payload) {
            if let gather = gathers[id], gather.addRemote(from: hub, answers) { gathers[id] = nil }
        }
    }

    /// Since when receipts are complete (Unix seconds): they are counted in memory by each hub
    /// for its own clients, so the sum is whole only since the latest start among the live hubs.
    var receiptsCountedSince: Int {
        let starts = (registry?.live ?? []).compactMap { $0["started_at"]?.intValue }
        return max(startedAt, starts.max() ?? 0) / 1000
    }

    /// Hubs that started at the same moment each found no other live hub to compare secrets
    /// with; the first heartbeat that lists a hub with other secrets stops this one taking changes
    /// (as when Redis is away: it serves its clients from memory, and `/healthz` says degraded).
    private func checkKeys(of live: [JSONValue]) {
        guard clusterFault == nil else { return }
        for entry in live {
            guard let hub = entry["hub"]?.stringValue, hub != hubID, let theirs = ClusterKeys(entry["keys"]),
                let difference = keys.difference(from: theirs, hub: hub)
            else { continue }
            return stopFollowing(difference)
        }
    }

    /// What this hub says about itself in the registry (`/v1/stats` "cluster.hubs").
    fileprivate var hubInfo: JSONValue {
        .object([
            "hub": .string(hubID), "client_listen": .string(clientAddress.description),
            "started_at": .number(Double(startedAt)), "entry": .number(Double(cluster?.applied ?? 0)),
            "connections": .number(Double(metrics.webSocketConnections.load(ordering: .relaxed))),
            "sessions": .number(Double(metrics.sessions.load(ordering: .relaxed))),
            "subscriptions": .number(Double(metrics.subscriptions.load(ordering: .relaxed))),
            "keys": keys.json,
        ])
    }

    /// Answers the requests that lost a race for an entry and cannot be made again now.
    private func refuseAwaitingCatchUp(_ error: AdminError) {
        let stale = awaitingCatchUp
        awaitingCatchUp.removeAll()
        refuse(stale, error)
    }

    /// 503 `redis_unavailable`: `what` went wrong with Redis, and the change was not made.
    private static func redisUnavailable(_ what: String) -> AdminError {
        AdminError(503, "redis_unavailable", "\(what); the change was not made")
    }

    private func stopFollowing(_ fault: String) {
        Log.error("cannot follow the shared journal; serving clients from memory, refusing changes", [("reason", fault)])
        clusterFault = fault
        refuseAwaitingCatchUp(AdminError(503, "shared_state_unavailable", fault))
    }

    /// Makes `mutations` again against the current state: admin requests run again, reads that
    /// waited for earlier changes answer.
    private func rerun(_ mutations: [Mutation]) {
        for mutation in mutations {
            if mutation.records.isEmpty {
                mutation.done(.success([]))
            } else if let retry = mutation.retry {
                retry()
            } else {
                mutation.done(
                    .failure(AdminError(409, "conflict", "a change made on another hub came first; retry")))
            }
        }
    }

    private func refuse(_ mutations: [Mutation], _ error: AdminError) {
        for mutation in mutations {
            // A read waiting for earlier changes answers from the state as it is.
            mutation.done(mutation.records.isEmpty ? .success([]) : .failure(error))
        }
    }

    /// The shared journal's state for `/healthz` and `/v1/stats` (nil: not scaled out).
    var clusterStatus: JSONValue? {
        guard let cluster, let redis = config.redis else { return nil }
        var located = redis
        (located.host, located.port) = (cluster.commands.address.host, Int(cluster.commands.address.port))
        return .object([
            "redis": .string(located.description), "hub": .string(hubID), "connected": .bool(cluster.isReady),
            "sentinel": sentinel.map { .string("\($0.masterName) via \($0.sentinels.map(\.description).joined(separator: ","))") }
                ?? .null,
            "entry": .number(Double(cluster.applied)),
            // Without the secrets' fingerprints: /healthz answers anyone.
            "hubs": .array(
                (registry?.live ?? []).map { entry in
                    guard case .object(var members) = entry else { return entry }
                    members["keys"] = nil
                    return .object(members)
                }),
            "error": clusterFault.map(JSONValue.string) ?? (cluster.isReady ? .null : .string(cluster.lastError)),
        ])
    }

    /// Whether the hub is degraded: scaled out, and the shared journal unreachable or stuck.
    var isDegraded: Bool { cluster.map { !$0.isReady || clusterFault != nil } ?? false }
}
