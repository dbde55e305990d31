/// Where the control plane's changes become durable, and where it learns of changes made by
/// other writers: the data dir's journal or memory (`LocalLog`), or the journal the hubs sharing a
/// Redis append to (`SharedLog`, DESIGN §11). The control plane never knows which.
///
/// Contract (every implementation keeps it; `ControlPlaneTests` script one):
/// - at most one `append` is outstanding, and none while the log reads entries made elsewhere:
///   `isBusy` says so, and the control plane then holds its next batch;
/// - `append` calls `done` exactly once, on the control plane's loop — at once (a local log) or
///   later (a shared one);
/// - entries made elsewhere reach the follower in log order (`follow`, or `reload` when the log
///   starts again from a snapshot); each read the log makes ends with `settled`, and one follows
///   every `.lostRace`.
protocol StateLog: AnyObject {
    /// Who applies what other writers appended; set once, before the loop runs.
    var follower: (any LogFollower)? { get set }
    /// An append, or a read of entries made elsewhere, is in flight.
    var isBusy: Bool { get }
    /// Appends `batch` as the log's next entry and tells `done` how it went.
    func append(_ batch: LogBatch, now: UInt64, done: @escaping (LogAppendOutcome) -> Void)
    /// The batch last appended is applied and delivered; `state` is the state it led to (a chance
    /// to write a snapshot).
    func didCommit(_ state: HubState, now: UInt64)
    /// Called at the end of every loop tick: reads entries made elsewhere when they are due.
    func tick(now: UInt64)
    /// When `tick` must run next (`.max`: only with the loop's other work).
    var nextDeadline: UInt64 { get }
    /// What the control plane's loop drives for the log (its connections).
    var sources: [LoopSource] { get }
    /// The loop stopped: the log's connections close.
    func close(now: UInt64)
    /// Why changes are refused because the log cannot be reached or followed (nil: they are not);
    /// `/readyz` shows it.
    var degradation: String? { get }
    /// What `/healthz` and `/v1/stats` show of the log (nil: nothing beyond "ok").
    var status: JSONValue? { get }
}

extension StateLog {
    /// Changes are refused because the log cannot be reached or followed.
    var isDegraded: Bool { degradation != nil }
}

/// One tick's changes, appended as one entry: one fsync, or one entry of the shared journal.
struct LogBatch {
    var records: [HubRecord]
    /// Records whose change every hub answers about (a publish's reach, a sync's targets): the
    /// record's index, and the gather that collects the answers.
    var gathers: [(record: Int, id: GatherID)]
}

/// How an append ended.
enum LogAppendOutcome {
    /// Durable: every reader of the log applies the batch, in this place.
    case durable
    /// Another writer's entry took the place: the log reads what came first (`LogFollower.follow`,
    /// then `settled`); the batch must be made again against the state that leads to.
    case lostRace
    /// Not made (the log cannot be reached or followed, or the write failed): the batch is refused
    /// with `error`, which says what to do (and whether the change may have been made after all).
    case failed(AdminError)
}

/// A record another writer appended, and who waits for this hub's answer to its change.
struct FollowedRecord {
    var record: HubRecord
    var asker: RemoteAsker?
}

/// Another hub's gather waiting for this hub's answers.
struct RemoteAsker {
    var hub: String
    var gather: GatherID
}

/// What the log tells the control plane.
protocol LogFollower: AnyObject {
    /// Records other writers appended, in log order, all after what the follower applied so far.
    func follow(_ records: [FollowedRecord], now: UInt64)
    /// The log starts again from a snapshot (the follower fell behind what it keeps): `records`
    /// rebuild the whole state; entries after it follow.
    /// - Returns: how many changes it took to bring the loops there (for the log's own log line).
    @discardableResult
    func reload(_ records: [HubRecord], now: UInt64) -> Int
    /// A read of the log ended: everything there was is followed (`error` nil), or the log could
    /// not be read (the changes waiting for it are refused with `error`).
    func settled(refusing error: AdminError?)
}
