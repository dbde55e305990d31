/// One silent push waiting for its provider (DESIGN §17): a sync for one device.
struct PushJob {
    let sync: Sync
    let device: DeviceKey
    let provider: PushProvider
    let token: String
    let topic: String?
    /// Sends made so far (0: never sent).
    var attempts = 0
    /// Retried for a sync pushed to offline devices: ask whether the device connected meanwhile
    /// (it then had the sync over its socket) before sending again.
    var checksOnlineFirst = false

    init(sync: Sync, device: PushDevice) {
        self.sync = sync
        self.device = device.key
        provider = device.provider
        token = device.token
        topic = device.topic
    }
}

/// A provider's waiting pushes: those due now, in the order they came, and those due later (a
/// spread sync's later share, a retry after its backoff), by due time.
///
/// Invariants: `count == due.count - dueHead + later.count` never exceeds `capacity`; every job
/// in `due` from `dueHead` on is due.
struct PushQueue {
    let capacity: Int
    private var due: [PushJob] = []
    private var dueHead = 0
    private var later = Timers<PushJob>()

    init(capacity: Int) { self.capacity = capacity }

    var count: Int { due.count - dueHead + later.count }
    var isFull: Bool { count >= capacity }
    /// When the next job waiting for its time is due (nil: none waits).
    var nextDue: UInt64? { later.nextDeadline }
    /// Whether a job can be taken now.
    var hasDue: Bool { dueHead < due.count }

    /// Adds `job`, due at `time` (`now` or earlier: at once). - Returns: false when full (dropped).
    mutating func add(_ job: PushJob, at time: UInt64, now: UInt64) -> Bool {
        guard !isFull else { return false }
        if time <= now { due.append(job) } else { later.schedule(job, at: time) }
        return true
    }

    /// Moves the jobs whose time has come to the due ones.
    mutating func release(now: UInt64) {
        while let entry = later.popDue(now: now) { due.append(entry.payload) }
    }

    /// The next due job, oldest first.
    mutating func next() -> PushJob? {
        guard dueHead < due.count else { return nil }
        let job = due[dueHead]
        dueHead += 1
        if dueHead == due.count {
            due.removeAll(keepingCapacity: due.count <= 4096)
            dueHead = 0
        } else if dueHead >= 4096, dueHead * 2 >= due.count {
            // Taken jobs are let go in bulk, so memory follows the queue down.
            due.removeFirst(dueHead)
            dueHead = 0
        }
        return job
    }

    /// Empties the queue. - Returns: the jobs it held.
    mutating func drain() -> [PushJob] {
        var jobs = Array(due[dueHead...])
        while let entry = later.popDue(now: .max) { jobs.append(entry.payload) }
        due.removeAll()
        dueHead = 0
        return jobs
    }
}
