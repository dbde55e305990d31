/// The log of a hub on its own: the data dir's journal (`StateJournal`), or nothing at all for a
/// hub without a data dir (tests, `--dev` without `--data`), whose state lives in memory only.
///
/// An append writes the whole batch with one write and one fsync and answers at once; no other
/// writer exists, so nothing is ever followed and no race is ever lost.
final class LocalLog: StateLog {
    private let journal: StateJournal?
    private let metrics: Metrics
    weak var follower: (any LogFollower)?

    /// - Parameter journal: the data dir's journal, already restored (nil: memory only).
    init(journal: StateJournal?, metrics: Metrics) {
        self.journal = journal
        self.metrics = metrics
    }

    var isBusy: Bool { false }

    func append(_ batch: LogBatch, now: UInt64, done: @escaping (LogAppendOutcome) -> Void) {
        guard let journal else { return done(.durable) }
        for record in batch.records { journal.append(record) }
        let started = MonotonicClock.now()
        do {
            let records = try journal.commit()
            metrics.noteCommit(records: records, nanoseconds: MonotonicClock.now() - started)
        } catch {
            metrics.persistFailures.add(1, ordering: .relaxed)
            Log.error("a write to the journal failed; the batch is refused", [("error", "\(error)")])
            return done(.failed(AdminError(503, "storage_failed", "the change could not be made durable: \(error)")))
        }
        done(.durable)
    }

    func didCommit(_ state: HubState, now: UInt64) {
        guard let journal, journal.isSnapshotDue else { return }
        do {
            try journal.writeSnapshot(state.snapshotRecords())
        } catch {
            // The journal still holds every record: nothing is lost, the next commit retries.
            metrics.persistFailures.add(1, ordering: .relaxed)
            Log.error("writing a snapshot failed", [("error", "\(error)")])
        }
    }

    func tick(now: UInt64) {}
    var nextDeadline: UInt64 { .max }
    var sources: [LoopSource] { [] }
    func close(now: UInt64) {}
    var degradation: String? { nil }
    var status: JSONValue? { nil }
}
