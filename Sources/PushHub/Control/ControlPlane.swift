/// The hub's one writer (DESIGN §9, STYLE §7): it owns all mutable hub state and every durable
/// write, and runs the admin API. It lives on its own loop thread (with the admin listener), so
/// an admin request, an fsync or a round trip to a shared log never runs on a client loop.
///
/// A tick of its loop reads every admin request that arrived and applies each mutation to `state`
/// at once (so the next request in the same tick sees it). At the end of the tick the tick's
/// records go to the log (`StateLog`) as one batch — group commit: one fsync, or one entry of the
/// shared journal — and only once the log says durable does each change reach every client loop,
/// in record order, and each request get its answer. Whatever the log is:
/// - failed: `state` goes back to `committed`; every request of the batch is refused with the
///   log's error; mutations made meanwhile on top of the batch are made again;
/// - lost the race (another writer took the place): the batch is taken back and waits while the
///   log brings in what came first (`follow`); then each request runs again (`Mutation.retry`)
///   against the new state, or is answered 409 if it cannot be;
/// - entries other writers made (`follow`) take back what is not yet durable here, are applied,
///   and what was taken back is made again after them.
///
/// Invariants: `committed` is the state as of the last entry the log made durable or handed over;
/// `state` is `committed` plus the mutations not yet durable; every change a loop applies was
/// durable first; changes reach every loop in the order of the log.
final class ControlPlane {
    let config: HubConfig
    let metrics: Metrics
    let adminToken: String
    /// The bound client listener (its real port when configured with 0).
    let clientAddress: SocketAddress
    /// The identity of the state this hub serves (`welcome.epoch`; `StateEpoch`).
    let epoch: String
    let log: any StateLog
    /// The client loops and the other hubs serving the same state.
    let scatter: Scatter
    /// What changes are validated against and made on: `committed` plus what is not durable yet.
    private(set) var state: HubState
    /// What reads answer from: the state as of the last entry the log made durable or handed over.
    private(set) var committed: HubState
    /// Mutations applied to `state` and not yet sent to the log.
    private var uncommitted: [Mutation] = []
    /// The batch the log is appending, with the state it leads to.
    private var appending: (mutations: [Mutation], state: HubState)?
    /// Mutations to make again once the log has brought in what came before them.
    private var awaitingCatchUp: [Mutation] = []
    /// The experiments' results (DESIGN §6), kept beside the state.
    let results: ExperimentResults
    /// Silent pushes to offline devices (DESIGN §17); nil when no provider is configured.
    let pushes: PushDispatcher?
    /// HTTP/1.1 out (DESIGN §18: JWKS fetches, webhook deliveries): an `HTTP1Client`, or a test's.
    let outbound: any HTTPFetching & LoopDriven
    /// Delivers the webhooks' events (DESIGN §18) through `outbound`.
    let webhooks: WebhookDispatcher
    /// `client.render_error` reports, aggregated into webhook events.
    var renderErrors = RenderErrorDigest()
    /// The JWKS of client tokens (DESIGN §18, `ControlPlane+Keys.swift`); nil without one.
    let keys: JWKSFetcher?
    /// The audit log's recent entries (`GET /v1/audit`); on this thread only, like `state`.
    var audit = AuditRing()
    /// Renditions and frames derived here; what a publish prepares is sent to the loops with it.
    var renditions = RenditionCache()
    /// Per screen, the render targets some loop's subscribers see it as, with how many loops.
    private var targetsInUse: [String: [RenderTarget: Int]] = [:]
    private var housekeeping: Housekeeping
    private let startedAt: Int
    /// When to judge the rolling releases again: a guard's halt that could not be made durable
    /// is asked for again then (no later report may come to ask for it).
    var releasesJudgedAgainAt: UInt64?
    /// Client loops whose thread has not finished yet (`LoopEvent.clientLoopStopped`): the
    /// control plane's loop stops after the last, not before (`EventLoop.hasDrained`).
    private(set) var clientLoopsRunning = 0

    /// A mutation waiting to be durable: its records and changes, whether its last change asks
    /// the loops for answers, what to do once they are in (or once it failed), and how to make it
    /// again against a newer state (nil: it cannot be).
    private struct Mutation {
        var records: [HubRecord]
        var changes: [HubChange]
        var gathers: Bool
        var done: (Result<[LoopAnswer], AdminError>) -> Void
        var retry: (() -> Void)?
        /// Which of `records` made the last change (the one a gathering mutation asks about).
        var lastChangeRecord: Int?
        /// The gather of a gathering mutation, started when its batch is sent so that other hubs'
        /// answers find it whenever they arrive.
        var gatherID: GatherID?
    }

    /// - Parameters:
    ///   - log: where changes become durable, holding `state` so far.
    ///   - startedAt: when this hub started (Unix milliseconds).
    init(
        config: HubConfig, metrics: Metrics, adminToken: String, clientAddress: SocketAddress, log: any StateLog,
        peers: (any HubPeers)?, state restored: HubState, epoch: String, results: any ResultsLog,
        pushes: PushDispatcher? = nil, outbound: (any HTTPFetching & LoopDriven)? = nil, keys: JWKSFetcher? = nil,
        notifier: ServiceNotifier? = nil, startedAt: Int = WallClock.nowMilliseconds()
    ) {
        self.pushes = pushes
        // A context with the system's CAs fails only when OpenSSL cannot allocate one; https
        // calls then fail saying there is no TLS context.
        self.outbound = outbound ?? HTTP1Client(options: .init(tls: try? HTTP1Client.tlsContext(caFile: nil)))
        webhooks = WebhookDispatcher(http: self.outbound, metrics: WebhookMetrics())
        self.keys = keys
        keys?.client = self.outbound
        self.config = config
        self.metrics = metrics
        self.adminToken = adminToken
        self.clientAddress = clientAddress
        self.log = log
        self.epoch = epoch
        self.results = ExperimentResults(log: results, metrics: metrics, now: MonotonicClock.now())
        self.startedAt = startedAt
        state = restored
        committed = restored
        housekeeping = Housekeeping(notifier: notifier, metrics: metrics, now: MonotonicClock.now())
        var receiptsOf: ([Int]) -> [Int: ReceiptCounts] = { _ in [:] }
        scatter = Scatter(peers: peers) { receiptsOf($0) }
        log.follower = self
        receiptsOf = { [unowned self] seqs in Self.receipts(of: seqs, in: self.state) }
        self.results.releaseReported = { [unowned self] screen, release in
            self.judgeRelease(screen: screen, id: release)
        }
        judgeRollingReleases()
        attachPushes()
        attachWebhooks()
    }

    /// Restores the state where the configuration keeps it (`OpenedStateLog`).
    convenience init(
        config: HubConfig, metrics: Metrics, adminToken: String, jwtSecret: String = "", clientAddress: SocketAddress,
        dataDirectory: String?, keyStore: JWTKeyStore? = nil, notifier: ServiceNotifier? = nil
    ) throws {
        let startedAt = WallClock.nowMilliseconds()
        let opened = try OpenedStateLog(
            config: config, metrics: metrics, adminToken: adminToken, jwtSecret: jwtSecret, clientAddress: clientAddress,
            startedAt: startedAt, dataDirectory: dataDirectory)
        let pushes = try PushDispatcher(settings: config.push, metrics: metrics.push, now: MonotonicClock.now())
        let outbound = HTTP1Client(options: .init(tls: try HTTP1Client.tlsContext(caFile: config.outboundCAFile)))
        self.init(
            config: config, metrics: metrics, adminToken: adminToken, clientAddress: clientAddress, log: opened.log,
            peers: opened.peers, state: opened.state, epoch: opened.epoch,
            results: opened.results, pushes: pushes, outbound: outbound,
            keys: Self.keyFetcher(config: config, store: keyStore, dataDirectory: dataDirectory), notifier: notifier,
            startedAt: startedAt)
    }

    /// What the control plane's loop drives besides the admin connections (the log's links).
    var loopSources: [LoopSource] {
        log.sources + (pushes?.sources ?? []) + outbound.sources + (keys.map { [$0] } ?? [])
    }

    /// Called once the loop has stopped: leaves the other hubs, closes the log.
    func stopped() {
        let now = MonotonicClock.now()
        scatter.peers?.leave(now: now)
        log.close(now: now)
        pushes?.close()
        outbound.close()
    }

    func attach(loops mailboxes: [Mailbox]) {
        scatter.attach(loops: mailboxes)
        clientLoopsRunning = mailboxes.count
    }

    // MARK: - Mutations

    /// Applies `records` now and makes them durable at the end of the tick; then sends their
    /// changes to every loop and calls `done` — with the loops' answers to the last change when
    /// `gathering` (a publish's reach, a sync's targets).
    /// - Parameter retry: how to make the change again against a newer state when its batch lost
    ///   the race for the log's next entry (nil: it cannot be; it is answered 409).
    func mutate(
        _ records: [HubRecord], gathering: Bool = false, retry: (() -> Void)?,
        done: @escaping (Result<[LoopAnswer], AdminError>) -> Void
    ) {
        var changes: [HubChange] = []
        var lastChangeRecord: Int?
        // With each record, the webhook events it makes (DESIGN §18), in the same batch.
        var made: [HubRecord] = []
        made.reserveCapacity(records.count)
        let now = WallClock.nowMilliseconds()
        for record in records {
            if let change = state.apply(record) {
                changes.append(change)
                lastChangeRecord = made.count
            }
            made.append(record)
            for event in WebhookEventSource.events(of: record, in: state, now: now, hash: latestHash) {
                made.append(.webhook(.event(event)))
                state.apply(.webhook(.event(event)))
            }
        }
        uncommitted.append(
            Mutation(
                records: made, changes: changes, gathers: gathering && !changes.isEmpty, done: done, retry: retry,
                lastChangeRecord: lastChangeRecord))
    }

    /// Called by the loop at the end of every tick: the tick's mutations go to the log as one
    /// batch (unless it is busy: then at a later tick); expired gathers answer with what they have.
    func tickEnded(now: UInt64) {
        if !uncommitted.isEmpty && !log.isBusy { send(now: now) }
        log.tick(now: now)
        results.tickEnded(now: now)
        pushes?.tick(now: now)
        tickWebhooks(now: now)
        scatter.peers?.tick(now: now)
        scatter.expire(now: now)
        housekeeping.tick(now: now)
        if let due = releasesJudgedAgainAt, now >= due {
            releasesJudgedAgainAt = nil
            judgeRollingReleases()
        }
    }

    /// Nothing waits to be made durable, and the log is not bringing in entries made elsewhere.
    var uncommittedIsEmpty: Bool { uncommitted.isEmpty && !log.isBusy }

    /// The earliest deadline of a gather, the log, the other hubs or housekeeping, for the loop's
    /// wait; 0 (do not wait) while a change made during the tick's end (a change made again after
    /// a failed batch, one made by a callback) waits for a log that is free to take it.
    var nextDeadline: UInt64? {
        if !uncommitted.isEmpty && !log.isBusy { return 0 }
        return min(
            scatter.nextDeadline, log.nextDeadline, results.nextDeadline, scatter.peers?.nextDeadline ?? .max,
            pushes?.nextDeadline ?? .max, webhooksNextDeadline ?? .max,
            housekeeping.nextDeadline, releasesJudgedAgainAt ?? .max)
    }

    /// Appends the tick's mutations as one batch; reads that only waited for earlier changes are
    /// answered at once.
    private func send(now: UInt64) {
        var batch = uncommitted
        uncommitted.removeAll(keepingCapacity: true)
        let records = batch.flatMap(\.records)
        if records.isEmpty { return deliver(batch, now: now) }
        // With other hubs, gathers start now: they answer once they applied the entry, which may
        // be before this hub hears that its append succeeded. Deadlines start once it is durable.
        // (Alone, a gather starts when its change goes to the loops, `deliver`.)
        var gathered: [(record: Int, id: GatherID)] = []
        var offset = 0
        for index in batch.indices where scatter.peers != nil {
            defer { offset += batch[index].records.count }
            guard batch[index].gathers, let record = batch[index].lastChangeRecord else { continue }
            let done = batch[index].done
            let id = scatter.start(now: now, remote: nil) { answers, _ in done(.success(answers)) }
            scatter.setDeadline(.max, of: id)
            batch[index].gatherID = id
            gathered.append((offset + record, id))
        }
        appending = (batch, state)
        log.append(LogBatch(records: records, gathers: gathered), now: now) { [unowned self] outcome in
            self.appended(outcome)
        }
        // Unless the log refused at once (its gathers are dropped already).
        if appending != nil { scatter.expectLiveHubs(in: gathered.map(\.id), now: now) }
    }

    private func appended(_ outcome: LogAppendOutcome) {
        guard let (batch, after) = appending else { preconditionFailure("an append answered while none was outstanding") }
        appending = nil
        let now = MonotonicClock.now()
        switch outcome {
        case .durable:
            for mutation in batch {
                if let id = mutation.gatherID { scatter.setDeadline(now + Scatter.timeout, of: id) }
            }
            committed = after
            deliver(batch, now: now)
            log.didCommit(committed, now: now)
        case .lostRace:
            // Mutations made meanwhile were made on top of the batch: they wait with it.
            awaitingCatchUp += batch + takeBack(batch)
        case .failed(let error):
            let later = takeBack(batch)
            refuse(batch, error)
            rerun(later)
        }
    }

    /// Forgets `batch` (and its gathers) and every mutation made on top of it: `state` is
    /// `committed` again. - Returns: the mutations made on top of it, oldest first.
    private func takeBack(_ batch: [Mutation]) -> [Mutation] {
        for mutation in batch { if let id = mutation.gatherID { scatter.drop(id) } }
        let later = uncommitted
        uncommitted.removeAll()
        state = committed
        return later
    }

    /// Sends each durable mutation's changes to the loops in order, then answers it (once the
    /// loops answered, for a gathering one).
    private func deliver(_ batch: [Mutation], now: UInt64) {
        for mutation in batch {
            for (index, plain) in mutation.changes.enumerated() {
                let change = prepared(plain)
                if mutation.gathers && index == mutation.changes.count - 1 {
                    let done = mutation.done
                    let id = mutation.gatherID ?? scatter.start(now: now) { answers, _ in done(.success(answers)) }
                    scatter.broadcast(change, reply: id)
                } else {
                    scatter.broadcast(change, reply: nil)
                }
            }
            if !mutation.gathers { mutation.done(.success([])) }
        }
    }

    /// Makes `mutations` again against the current state, in order: requests run again; a read
    /// that waited for earlier changes answers, or, when some of them are being made again, waits
    /// for those once more.
    private func rerun(_ mutations: [Mutation]) {
        for mutation in mutations {
            if mutation.records.isEmpty {
                if uncommitted.isEmpty { mutation.done(.success([])) } else { uncommitted.append(mutation) }
            } else if let retry = mutation.retry {
                retry()
            } else {
                mutation.done(.failure(AdminError(409, "conflict", "a change made on another hub came first; retry")))
            }
        }
    }

    private func refuse(_ mutations: [Mutation], _ error: AdminError) {
        for mutation in mutations {
            // A read waiting for earlier changes answers from the state as it is.
            mutation.done(mutation.records.isEmpty ? .success([]) : .failure(error))
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
            _ = renditions.rendered(version, for: latestTarget)
            let entry = renditions.prepare(
                version, from: previous, for: targetsInUse[version.name].map { Array($0.keys) } ?? [])
            renditions.forget(screen: version.name, keeping: kept)
            return .screenPublished(version, prepared: entry)
        case .screenDeleted(let name):
            renditions.forget(screen: name, keeping: [])
            return change
        case .cohortChanged, .experimentsChanged, .stickyRecorded, .syncAppended, .releaseChanged, .screenReloaded,
            .componentsChanged:
            return change
        }
    }

    /// The hash of `version` as an up-to-date client sees it (what admin answers report).
    func latestHash(_ version: ScreenVersion) -> String { renditions.rendered(version, for: latestTarget).hash }

    /// An up-to-date client without variants that renders every registered component (DESIGN §16).
    var latestTarget: RenderTarget { committed.view.latestTarget }

    // MARK: - Scatter-gather

    /// Asks every client loop, and every other live hub's, `query` (`Scatter.gather`).
    func gather(_ query: LoopQuery, now: UInt64, finish: @escaping (_ answers: [LoopAnswer], _ complete: Bool) -> Void) {
        scatter.gather(query, now: now, finish: finish)
    }

    /// The receipts of the syncs numbered `seqs`, summed over every live hub.
    func gatherReceipts(seqs: [Int], now: UInt64, finish: @escaping ([Int: ReceiptCounts]) -> Void) {
        scatter.gatherReceipts(seqs: seqs, own: Self.receipts(of: seqs, in: state), now: now, finish: finish)
    }

    private static func receipts(of seqs: [Int], in state: HubState) -> [Int: ReceiptCounts] {
        let wanted = Set(seqs)
        var counts: [Int: ReceiptCounts] = [:]
        for sync in state.view.syncs.syncs where wanted.contains(sync.seq) { counts[sync.seq] = sync.receipts.counts }
        return counts
    }

    /// Since when receipts are complete (Unix seconds): each hub counts them in memory for its
    /// own clients, so the sum is whole only since the latest start among the live hubs.
    var receiptsCountedSince: Int { max(startedAt, scatter.peers?.latestStart ?? 0) / 1000 }

    // MARK: - Events from the loops

    func received(_ event: LoopEvent) {
        switch event {
        case .answer(let id, let answer):
            scatter.add(answer, to: id)
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
        case .result(let event, let sessionWasServed):
            results.record(event, sessionWasServed: sessionWasServed)
        case .targetInUse(let screen, let target, let inUse):
            let loops = (targetsInUse[screen]?[target] ?? 0) + (inUse ? 1 : -1)
            targetsInUse[screen, default: [:]][target] = loops > 0 ? loops : nil
            if targetsInUse[screen]?.isEmpty == true { targetsInUse[screen] = nil }
        case .pushDeviceRegistered(let device):
            // Apps register on every connect: only a change is journaled.
            if let known = state.devices[device.key], known.isSameRegistration(as: device) { return }
            keepPushRegistration(.pushDeviceSet(device), event: event)
        case .pushDeviceRemoved(let key):
            guard state.devices[key] != nil else { return }
            keepPushRegistration(.pushDeviceRemoved(key, token: nil), event: event)
        case .renderError(let report):
            renderErrorReported(report)
        case .unknownKeyID(let kid):
            unknownKeyReported(kid)
        case .clientLoopStopped:
            clientLoopsRunning -= 1
        }
    }
}

extension ControlPlane {
    /// Makes a client's push registration durable; scaled out, one that lost the race is judged
    /// again against the state it lost to.
    fileprivate func keepPushRegistration(_ record: HubRecord, event: LoopEvent) {
        let retry = { [unowned self] in self.received(event) }
        mutate([record], retry: retry) { result in
            if case .failure(let error) = result {
                Log.error("a push registration could not be made durable", [("error", error.message)])
            }
        }
    }
}

// MARK: - Following the log

extension ControlPlane: LogFollower {
    /// Other writers' changes come before anything not yet durable here: that is taken back,
    /// and made again once the log has settled (`settled`).
    func follow(_ records: [FollowedRecord], now: UInt64) {
        awaitingCatchUp += takeBack([])
        var changes: [(HubChange, asker: RemoteAsker?)] = []
        for followed in records {
            if let change = committed.apply(followed.record) { changes.append((change, followed.asker)) }
        }
        state = committed
        for (change, asker) in changes {
            scatter.broadcast(prepared(change), reply: asker.map { scatter.start(now: now, answering: $0) })
        }
    }

    /// Brings the loops from `committed` to the state `records` rebuild, with the changes between
    /// (`HubState.changes(toReach:)`).
    func reload(_ records: [HubRecord], now: UInt64) -> Int {
        var fresh = committed.emptied
        for record in records { fresh.apply(record) }
        let (changes, target) = committed.changes(toReach: fresh)
        awaitingCatchUp += takeBack([])
        committed = target
        state = committed
        for change in changes { scatter.broadcast(prepared(change), reply: nil) }
        return changes.count
    }

    func settled(refusing error: AdminError?) {
        let waiting = awaitingCatchUp
        awaitingCatchUp.removeAll()
        if let error { refuse(waiting, error) } else { rerun(waiting) }
    }
}

@available(*, unavailable)
extension ControlPlane: Sendable {}
