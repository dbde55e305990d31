/// The log of hubs scaled out over Redis (DESIGN §11): the shared journal (`ClusterJournal`),
/// which every hub appends to and follows.
///
/// An append is a compare-and-append of entry `applied + 1`: it lands only if no hub appended
/// since, else it is `.lostRace` and this log reads the entries it missed. Entries other hubs
/// append are read when one is announced on the notice channel, and every `pollInterval` (a
/// notice is lost while the notice link reconnects). A hub that fell behind the trimmed stream
/// reloads the shared snapshot. Every `snapshotEvery` entries, the hub that appended one writes it.
///
/// Invariants: one request is outstanding at a time (`phase`); entries reach the follower in
/// stream order, each once, none skipped (a gap reloads the snapshot); every read ends with
/// `settled`; once `fault` is set (an entry or snapshot this hub cannot apply, or hubs with other
/// secrets) no read or append starts until a restart — a read already in flight ends, and what
/// waits for it is refused.
final class SharedLog: StateLog {
    let journal: ClusterJournal
    let sentinel: SentinelLocator?
    private let redis: RedisURL
    private let metrics: Metrics
    weak var follower: (any LogFollower)?
    private var phase = Phase.idle
    /// Set when another hub announced an entry (or one may have been missed): read at the next tick.
    private var entriesAnnounced = false
    private var nextPoll: UInt64 = 0
    /// Why the shared journal cannot be followed (nil: it can); the hub then serves from memory.
    private(set) var fault: String?
    /// Set by `close`: the links close because we close them, not because Redis went away.
    private var isClosing = false
    /// The other hubs, for `/healthz` (set by `ClusterPeers`).
    var liveHubs: () -> [JSONValue] = { [] }

    private enum Phase {
        case idle
        case appending(started: UInt64)
        case reading
    }

    /// How often the journal is read without a notice.
    static let pollInterval: UInt64 = 1_000_000_000
    /// Every this many entries, the hub that appended one writes the shared snapshot.
    static let snapshotEvery = 1000

    init(journal: ClusterJournal, sentinel: SentinelLocator?, redis: RedisURL, metrics: Metrics) {
        self.journal = journal
        self.sentinel = sentinel
        self.redis = redis
        self.metrics = metrics
        metrics.redisUp.store(0, ordering: .relaxed)  // until the link is ready
        journal.onNotice = { [unowned self] in self.entriesAnnounced = true }
        sentinel?.onMove = { [unowned self] address in
            self.journal.reconnect(because: "Sentinel moved the master to \(address)", now: MonotonicClock.now())
        }
        // Weak: closing the links (at a clean stop, or when the log is dropped) calls this too.
        journal.commands.onDown = { [weak self, metrics] reason in
            metrics.redisUp.store(0, ordering: .relaxed)
            guard let self, !self.isClosing else { return }  // our own close is no fault
            // The notice link has no replies to wait for, so nothing else tells that it is dead.
            self.journal.notices.reconnect(because: "the command link went down", now: MonotonicClock.now())
            Log.error("lost the connection to Redis; serving clients from memory, refusing changes", [("reason", reason)])
        }
        journal.commands.onReady = { [unowned self, metrics, hubID = journal.hubID] in
            metrics.redisUp.store(1, ordering: .relaxed)
            Log.info("connected to Redis", [("hub", hubID)])
            self.entriesAnnounced = true
        }
    }

    var isBusy: Bool {
        if case .idle = phase { return false }
        return true
    }

    var sources: [LoopSource] { [journal.commands, journal.notices] + (sentinel.map { [$0.link] } ?? []) }

    /// Connects the journal's links before the hub serves, blocking (the hub's start, before its
    /// loops run): a hub that logs "listening" and tells systemd READY then takes a change at once
    /// and answers `/readyz` 200. Redis answered the load a moment before; if it went away since,
    /// the hub serves degraded after `timeout` and keeps reconnecting, as when a link drops.
    /// - Returns: whether both links are up and every subscription is confirmed.
    func connectNow(timeout: Duration) -> Bool {
        PollDriver(sources).run(for: timeout) { journal.isListening }
    }

    // MARK: - Appending

    func append(_ batch: LogBatch, now: UInt64, done: @escaping (LogAppendOutcome) -> Void) {
        precondition(!isBusy, "one request to the shared journal at a time")
        if let fault {
            return done(.failed(AdminError(503, "shared_state_unavailable", "\(fault); the change was not made")))
        }
        guard journal.isReady else {
            return done(
                .failed(
                    AdminError(
                        503, "redis_unavailable",
                        "Redis is unreachable (\(journal.notReadyReason)); the change was not made. This hub keeps serving "
                            + "its clients and reconnects; retry")))
        }
        phase = .appending(started: MonotonicClock.now())
        journal.append(batch.records, gathers: batch.gathers, now: now) { [unowned self] outcome in
            guard case .appending(let started) = phase else {
                preconditionFailure("an append answered while none was outstanding")
            }
            phase = .idle
            let now = MonotonicClock.now()
            switch outcome {
            case .appended:
                metrics.noteCommit(records: batch.records.count, nanoseconds: now - started)
                done(.durable)
            case .conflict:
                metrics.redisConflicts.add(1, ordering: .relaxed)
                done(.lostRace)
                read(now: now)
            case .failed(let error):
                metrics.persistFailures.add(1, ordering: .relaxed)
                Log.error("appending to the shared journal failed", [("error", "\(error)")])
                // Maybe it landed after all: read, and it is followed like any other entry.
                if error.outcomeUnknown { entriesAnnounced = true }
                let message =
                    error.outcomeUnknown
                    ? "Redis did not confirm the change (\(error)); it may or may not have been made: read it back "
                        + "before retrying"
                    : "Redis refused the change (\(error)); it was not made"
                done(.failed(AdminError(503, "redis_unavailable", message)))
            }
        }
    }

    func didCommit(_ state: HubState, now: UInt64) {
        guard journal.applied % Self.snapshotEvery == 0 else { return }
        journal.writeSnapshot(state.snapshotRecords(), lsn: journal.applied, now: now)
    }

    // MARK: - Following

    func tick(now: UInt64) {
        if case .idle = phase, fault == nil, entriesAnnounced || now >= nextPoll { read(now: now) }
        sentinel?.tick(now: now)
        journal.tick(now: now)
    }

    var nextDeadline: UInt64 { min(nextPoll, sentinel?.nextDeadline ?? .max, journal.nextNoticePing) }

    /// Reads the entries after `applied` and hands them to the follower; then `settled`.
    private func read(now: UInt64) {
        entriesAnnounced = false
        nextPoll = now + Self.pollInterval
        if let fault { return settled(refusing: AdminError(503, "shared_state_unavailable", fault)) }
        guard case .idle = phase, journal.isReady else {
            // Once connected again (`onReady` announces) the read happens; meanwhile changes that
            // lost a race cannot be made again.
            return settled(refusing: Self.unavailable("Redis is unreachable (\(journal.notReadyReason))"))
        }
        phase = .reading
        journal.fetch(now: now) { [unowned self] outcome in
            phase = .idle
            let now = MonotonicClock.now()
            switch outcome {
            case .entries(let entries, let more):
                if !entries.isEmpty { hand(entries, now: now) }
                if more { return read(now: now) }
                settled(refusing: nil)
            case .gap(let expected, let found):
                Log.warning(
                    "the shared journal no longer holds the next entry: reloading the shared snapshot",
                    [("entry", expected), ("stream_starts_at", found)])
                reloadSnapshot(now: now)
            case .undecodable(let lsn, let reason):
                stopFollowing(
                    "journal entry \(lsn) in Redis cannot be applied (\(reason)); is a newer PushHub writing to it?")
            case .failed(let error):
                entriesAnnounced = true
                settled(refusing: Self.unavailable("reading the shared journal failed (\(error))"))
            }
        }
    }

    /// Gives the follower `entries`' records, each with the hub waiting for this one's answer
    /// to its change (none for this hub's own entries).
    private func hand(_ entries: [ClusterJournal.Entry], now: UInt64) {
        var records: [FollowedRecord] = []
        for entry in entries {
            for (index, record) in entry.records.enumerated() {
                let asker = entry.gathers[index].flatMap {
                    entry.hub == journal.hubID ? nil : RemoteAsker(hub: entry.hub, gather: $0)
                }
                records.append(FollowedRecord(record: record, asker: asker))
            }
        }
        journal.advance(to: entries[entries.count - 1].lsn)
        metrics.redisEntriesApplied.add(entries.count, ordering: .relaxed)
        follower?.follow(records, now: now)
    }

    /// Starts again from the shared snapshot (this hub fell behind the trimmed stream), then reads
    /// the entries after it.
    private func reloadSnapshot(now: UInt64) {
        phase = .reading
        journal.readSnapshot(now: now) { [unowned self] result in
            phase = .idle
            let now = MonotonicClock.now()
            switch result {
            case .failure(.unreadable(let reason)):
                stopFollowing("the shared snapshot cannot be applied (\(reason)); is a newer PushHub writing to it?")
            case .failure(.redis(let error)):
                entriesAnnounced = true  // read again; the changes waiting for it cannot be made meanwhile
                Log.error("reloading the shared snapshot failed", [("error", "\(error)")])
                settled(refusing: Self.unavailable("reading the shared snapshot failed (\(error))"))
            case .success(let snapshot) where snapshot.lsn < journal.applied:
                stopFollowing(
                    "the shared journal was trimmed past entry \(journal.applied) but the shared snapshot is older "
                        + "(entry \(snapshot.lsn))")
            case .success(let snapshot):
                journal.advance(to: snapshot.lsn)
                metrics.redisSnapshotReloads.add(1, ordering: .relaxed)
                let changes = follower?.reload(snapshot.records, now: now) ?? 0
                Log.info("reloaded the shared snapshot", [("entry", snapshot.lsn), ("changes", changes)])
                read(now: now)
            }
        }
    }

    private func settled(refusing error: AdminError?) { follower?.settled(refusing: error) }

    /// Stops appending and following for good (until a restart): the hub serves its clients from
    /// memory and refuses changes with the first fault; what waits for the log is refused now.
    func stopFollowing(_ fault: String) {
        if self.fault == nil {
            Log.error(
                "cannot follow the shared journal; serving clients from memory, refusing changes", [("reason", fault)])
            self.fault = fault
        }
        settled(refusing: AdminError(503, "shared_state_unavailable", self.fault ?? fault))
    }

    /// 503 `redis_unavailable`: `what` went wrong with Redis, and the change was not made.
    private static func unavailable(_ what: String) -> AdminError {
        AdminError(503, "redis_unavailable", "\(what); the change was not made")
    }

    func close(now: UInt64) {
        isClosing = true
        journal.commands.tick(now: now)  // writes what is queued (a leave); the replies are not awaited
        journal.close()
        sentinel?.link.close()
    }

    // MARK: - Health

    var degradation: String? {
        if let fault { return "cannot follow the shared journal: \(fault)" }
        if journal.isReady { return nil }
        let failure = journal.commands.lastError
        return failure.isEmpty ? "connecting to Redis" : "cannot reach Redis: \(failure)"
    }

    var status: JSONValue? {
        var located = redis
        (located.host, located.port) = (journal.commands.address.host, Int(journal.commands.address.port))
        return .object([
            "redis": .string(located.description), "hub": .string(journal.hubID), "connected": .bool(journal.isReady),
            "sentinel": sentinel.map { .string("\($0.masterName) via \($0.sentinels.map(\.description).joined(separator: ","))") }
                ?? .null,
            "entry": .number(Double(journal.applied)),
            // Without the secrets' fingerprints: /healthz answers anyone.
            "hubs": .array(
                liveHubs().map { entry in
                    guard case .object(var members) = entry else { return entry }
                    members["keys"] = nil
                    return .object(members)
                }),
            "error": fault.map(JSONValue.string) ?? (journal.isReady ? .null : .string(journal.notReadyReason)),
        ])
    }
}
