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
/// Invariants: `committed` is the state as of the last durable record; every change a loop
/// applies was durable first; changes reach every loop in the order of their records.
final class ControlPlane {
    let config: HubConfig
    let metrics: Metrics
    let adminToken: String
    /// The bound client listener (its real port when configured with 0).
    let clientAddress: SocketAddress
    private(set) var state: HubState
    private var committed: HubState
    private let journal: StateJournal?
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

    /// A mutation waiting for its fsync: its changes, whether its last change asks the loops for
    /// answers, and what to do once they are in (or once it failed).
    private struct Mutation {
        var changes: [HubChange]
        var gathers: Bool
        var done: (Result<[LoopAnswer], AdminError>) -> Void
    }

    /// Restores the state from `dataDirectory` (nil: in memory, for tests).
    init(
        config: HubConfig, metrics: Metrics, adminToken: String, clientAddress: SocketAddress, dataDirectory: String?,
        notifier: ServiceNotifier? = nil
    ) throws {
        self.notifier = notifier
        watchdogDue = notifier?.watchdogInterval.map { MonotonicClock.now() + $0 }
        self.config = config
        self.metrics = metrics
        self.adminToken = adminToken
        self.clientAddress = clientAddress
        var restored = HubState(keepVersions: config.keepVersions)
        if let dataDirectory {
            let journal = try StateJournal(directory: dataDirectory)
            try journal.restore { restored.apply($0) }
            self.journal = journal
        } else {
            journal = nil
        }
        state = restored
        committed = restored
        exposures = Exposures(dataDirectory: dataDirectory, metrics: metrics)
    }

    func attach(loops mailboxes: [Mailbox]) { loops = mailboxes }

    // MARK: - Mutations

    /// Applies `records` now and makes them durable at the end of the tick; then sends their
    /// changes to every loop and calls `done` — with the loops' answers to the last change when
    /// `gathering` (a publish's reach, a sync's targets).
    func mutate(
        _ records: [HubRecord], gathering: Bool = false, done: @escaping (Result<[LoopAnswer], AdminError>) -> Void
    ) {
        var changes: [HubChange] = []
        for record in records {
            journal?.append(record)
            if let change = state.apply(record) { changes.append(change) }
        }
        uncommitted.append(Mutation(changes: changes, gathers: gathering && !changes.isEmpty, done: done))
    }

    /// Called by the loop at the end of every tick: one fsync for the tick's mutations, then
    /// their effects in order; expired gathers answer with what they have.
    func tickEnded(now: UInt64) {
        if !uncommitted.isEmpty { commit(now: now) }
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

    var uncommittedIsEmpty: Bool { uncommitted.isEmpty }

    /// The earliest gather deadline, memory check or watchdog ping, for the loop's wait.
    var nextDeadline: UInt64? {
        min(gathers.values.map(\.deadline).min() ?? .max, reclaimer.nextCheck, watchdogDue ?? .max)
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
        for mutation in batch {
            for (index, plain) in mutation.changes.enumerated() {
                let change = prepared(plain)
                if mutation.gathers && index == mutation.changes.count - 1 {
                    let done = mutation.done
                    let id = startGather(now: now) { answers, _ in done(.success(answers)) }
                    broadcast(change, reply: id)
                } else {
                    broadcast(change, reply: nil)
                }
            }
            if !mutation.gathers { mutation.done(.success([])) }
        }
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

    /// Asks every client loop `query`; `finish` gets the answers (all of them, unless a loop did
    /// not answer within `gatherTimeout`: then `complete` is false).
    func gather(_ query: LoopQuery, now: UInt64, finish: @escaping (_ answers: [LoopAnswer], _ complete: Bool) -> Void) {
        let id = startGather(now: now, finish: finish)
        for mailbox in loops { mailbox.post(.query(query, reply: id)) }
    }

    private func startGather(now: UInt64, finish: @escaping ([LoopAnswer], Bool) -> Void) -> GatherID {
        let id = nextGatherID
        nextGatherID += 1
        if loops.isEmpty {
            finish([], true)
        } else {
            gathers[id] = Gather(expected: loops.count, deadline: now + Self.gatherTimeout, finish: finish)
        }
        return id
    }

    // MARK: - Events from the loops

    func received(_ event: LoopEvent) {
        switch event {
        case .answer(let id, let answer):
            if let gather = gathers[id], gather.add(answer) { gathers[id] = nil }
        case .stickyAssigned(let experiment, let unit, let variant):
            // First writer wins: a later assignment of the same unit (another loop that had not yet
            // heard of the first) is dropped, and the recorded one reaches that loop too.
            guard state.view.experiments.all[experiment] != nil, state.view.sticky[experiment]?[unit] == nil else {
                return
            }
            mutate([.stickyAssigned(experiment: experiment, unit: unit, variant: variant)]) { result in
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

extension ControlPlane {
    /// Runs `body` once everything mutated so far is durable (at once when nothing is pending), so
    /// that a read never shows what a failed commit would take back.
    func afterCommit(_ body: @escaping () -> Void) {
        if uncommittedIsEmpty {
            body()
        } else {
            mutate([]) { _ in body() }
        }
    }

    /// Makes `records` durable, then answers 200 with `answer` of the loops' answers (when
    /// `gathering`), or the failure.
    func commit(
        _ records: [HubRecord], gathering: Bool = false, reply: AdminReply,
        answer: @escaping ([LoopAnswer]) -> JSONValue
    ) {
        mutate(records, gathering: gathering) { result in
            switch result {
            case .failure(let error): reply.error(error)
            case .success(let answers): reply.json(200, answer(answers))
            }
        }
    }

    /// Serves one admin request (DESIGN §7); `reply` answers now or later.
    func handle(_ head: RequestHead, body: [UInt8], reply: AdminReply) {
        AdminAPI(plane: self).handle(head, body: body, reply: reply)
    }
}
