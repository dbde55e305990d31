import HTTP2

/// One provider's pushes (DESIGN §17): its queue, its credentials and its connection. Jobs are
/// handed to the connection in queue order, at most `maxInFlight` at a time (the connection
/// multiplexes them within the provider's stream limit), and each answer decides the job's end:
/// pushed, the token dead, retried after a backoff within the sync's TTL, or failed.
///
/// A tick takes at most `maxTakenPerTick` jobs off the queue, and asks about at most
/// `maxOnlineCheck` devices at once, so a sync to 100,000 devices never holds the control
/// plane's loop for long.
///
/// Invariants: every job that entered the channel ends exactly once (`finish`), counted in
/// `/metrics` and, pushed or failed, in its sync's receipts; the jobs it holds (queued or waiting
/// for an online check) never exceed its capacity; once `stopped`, no request is sent again: the
/// connection is closed and what it had not answered ends as `unavailable`.
/// Called on the control plane's thread only.
final class PushChannel {
    let provider: PushProvider
    private let transport: PushTransport
    private let credentials: PushCredentials
    private let metrics: PushMetrics
    private var queue: PushQueue
    /// Jobs retried for a sync pushed to offline devices, waiting to hear whether their device
    /// connected meanwhile.
    private var awaitingOnlineCheck: [PushJob] = []
    private var onlineCheckOutstanding = false
    /// The jobs of the online question under way (held by its answer's closure).
    private var beingChecked = 0
    /// Why the provider stopped (nil: running).
    private(set) var stopped: String?
    /// What the credentials said last (pending: due jobs wait for them).
    private var lastAuthorization = PushAuthorization.pending

    /// Requests handed to the connection and not yet answered, at most.
    let maxInFlight: Int
    /// A job is sent at most this many times.
    static let maxAttempts = 8
    /// Jobs a tick takes off the queue at most (sent, expired or set aside for an online check).
    static let maxTakenPerTick = 2000
    /// Devices one online check asks about at most.
    static let maxOnlineCheck = 1000
    static let backoff = Backoff(initial: .seconds(1), cap: .seconds(600))

    /// The provider said a device's token is dead: forget the registration (unless it changed).
    var onTokenInvalid: ((DeviceKey, String) -> Void)?
    /// Asks which of these devices are connected now; the answer comes later, on this thread.
    var checkOnline: (([DeviceKey], @escaping (Set<DeviceKey>) -> Void) -> Void)?
    /// A uniform random number in [0, 1) for the backoff's jitter.
    var random: () -> Double = { Double.random(in: 0..<1) }

    init(
        credentials: PushCredentials, transport: PushTransport, metrics: PushMetrics, capacity: Int,
        maxInFlight: Int = 1000
    ) {
        provider = credentials.provider
        self.credentials = credentials
        self.transport = transport
        self.metrics = metrics
        self.maxInFlight = maxInFlight
        queue = PushQueue(capacity: capacity)
        metrics.setUp(true, provider)
    }

    var queued: Int { queue.count + awaitingOnlineCheck.count + beingChecked }

    /// Queues `job`, due at `time`; a full channel or a stopped provider ends it at once.
    func add(_ job: PushJob, at time: UInt64, now: UInt64) {
        guard stopped == nil else { return finish(job, .unavailable) }
        if !admit(job, at: time, now: now) { finish(job, .dropped) }
    }

    /// Queues `job` unless the channel holds its capacity already.
    private func admit(_ job: PushJob, at time: UInt64, now: UInt64) -> Bool {
        queued < queue.capacity && queue.add(job, at: time, now: now)
    }

    /// When `tick` must run next: at once while due jobs could go (a tick's share was taken and
    /// slots are free), else a job's time or the credentials' next try (nil: nothing waits for
    /// time; an answer wakes the loop).
    var nextDeadline: UInt64? {
        guard stopped == nil else { return nil }
        if queue.hasDue && transport.waiting < maxInFlight && credentials.nextAttempt == nil && !isFetching {
            return 0
        }
        return [queue.nextDue, queue.hasDue ? credentials.nextAttempt : nil].compactMap { $0 }.min()
    }

    /// The credentials are being fetched: due jobs wait for the answer, which wakes the loop.
    private var isFetching: Bool {
        if case .pending = lastAuthorization { return true }
        return false
    }

    /// Sends what is due, as far as the connection takes it.
    func tick(now: UInt64) {
        defer { metrics.setQueued(queued, provider) }
        queue.release(now: now)
        guard stopped == nil else { return }
        defer { checkOnlineIfDue() }
        let nowMilliseconds = WallClock.nowMilliseconds()
        var taken = 0
        while queue.hasDue && transport.waiting < maxInFlight && taken < Self.maxTakenPerTick {
            let credential: String
            lastAuthorization = credentials.authorization(nowMilliseconds: nowMilliseconds, now: now)
            switch lastAuthorization {
            case .ready(let value): credential = value
            case .pending: return
            case .refused(let reason): return stop(reason)
            }
            guard let job = queue.next() else { return }
            taken += 1
            if job.sync.expiresAt <= nowMilliseconds {
                finish(job, .expired)
            } else if job.checksOnlineFirst && checkOnline != nil {
                awaitingOnlineCheck.append(job)
            } else {
                send(job, credential: credential, nowMilliseconds: nowMilliseconds, now: now)
            }
        }
    }

    private func send(_ job: PushJob, credential: String, nowMilliseconds: Int, now: UInt64) {
        let request: HTTP2Request
        do {
            request = try credentials.request(for: job, credential: credential, nowMilliseconds: nowMilliseconds)
        } catch {
            Log.debug(
                "a push cannot be made",
                [("provider", provider.rawValue), ("sync", job.sync.id), ("error", "\(error)")])
            return finish(job, .failed)
        }
        var job = job
        job.attempts += 1
        transport.send(request, now: now) { [self, job] outcome in
            answered(job, credential: credential, outcome)
        }
    }

    private func answered(_ job: PushJob, credential: String, _ outcome: HTTP2LinkOutcome) {
        let now = MonotonicClock.now()
        switch outcome {
        case .failed(let reason, _):
            // The connection failed (or timed out): a silent push sent twice is harmless (the app
            // dedupes by id), so it is tried again either way.
            retry(job, after: nil, because: reason, now: now)
        case .response(let response):
            switch PushVerdict(provider: provider, response: response) {
            case .delivered:
                finish(job, .pushed)
            case .tokenInvalid(let reason):
                Log.debug("a push token is dead", [("provider", provider.rawValue), ("reason", reason)])
                onTokenInvalid?(job.device, job.token)
                finish(job, .invalidToken)
            case .retry(let after, let reason):
                retry(job, after: after, because: reason, now: now)
            case .renewCredentials(let reason):
                credentials.renew(after: credential)
                retry(job, after: .zero, because: reason, now: now)
            case .credentialsRejected(let reason):
                stop("\(provider.rawValue) refused the hub's credentials (\(reason))")
                finish(job, .unavailable)
            case .failed(let reason):
                Log.debug(
                    "a push was refused", [("provider", provider.rawValue), ("sync", job.sync.id), ("reason", reason)])
                finish(job, .failed)
            }
        }
        tick(now: now)
    }

    /// Sends `job` again after the backoff (or the provider's `retry-after`), unless its sync's
    /// TTL would run out first or it was sent `maxAttempts` times.
    private func retry(_ job: PushJob, after asked: Duration?, because reason: String, now: UInt64) {
        guard stopped == nil else { return finish(job, .unavailable) }
        guard job.attempts < Self.maxAttempts else {
            Log.debug("a push failed too often", [("provider", provider.rawValue), ("reason", reason)])
            return finish(job, .failed)
        }
        let backoff = Self.backoff.delay(attempt: job.attempts - 1, random: random())
        let delay = max(asked ?? .zero, backoff)
        guard WallClock.nowMilliseconds() + Int(delay.nanoseconds / 1_000_000) < job.sync.expiresAt else {
            return finish(job, .expired)
        }
        var again = job
        again.checksOnlineFirst = job.sync.push == .offline
        metrics.count(.retried, provider)
        if !admit(again, at: now + delay.nanoseconds, now: now) { finish(again, .dropped) }
    }

    /// Asks whether the devices of the retried jobs connected meanwhile: one question at a time,
    /// about `maxOnlineCheck` devices at most.
    private func checkOnlineIfDue() {
        guard !awaitingOnlineCheck.isEmpty, !onlineCheckOutstanding, stopped == nil, let checkOnline else { return }
        let jobs = Array(awaitingOnlineCheck.prefix(Self.maxOnlineCheck))
        awaitingOnlineCheck.removeFirst(jobs.count)
        onlineCheckOutstanding = true
        beingChecked = jobs.count
        checkOnline(jobs.map(\.device)) { [self] online in
            onlineCheckOutstanding = false
            beingChecked = 0
            let now = MonotonicClock.now()
            for var job in jobs {
                if stopped != nil {
                    finish(job, .unavailable)
                } else if online.contains(job.device) {
                    finish(job, .online)
                } else {
                    job.checksOnlineFirst = false
                    // Its place stayed counted (`beingChecked`) while the question was out.
                    if !admit(job, at: now, now: now) { finish(job, .dropped) }
                }
            }
            tick(now: now)
        }
    }

    /// The provider refused the credentials: nothing more is sent; what waits fails, and the
    /// connection closes (its unanswered requests come back failed and end as `unavailable`).
    private func stop(_ reason: String) {
        guard stopped == nil else { return }
        stopped = reason
        metrics.setUp(false, provider)
        Log.error(
            "push provider stopped: fix its credentials and restart the hub",
            [("provider", provider.rawValue), ("reason", reason)])
        for job in queue.drain() + awaitingOnlineCheck.drainAll() { finish(job, .unavailable) }
        transport.close()
    }

    private func finish(_ job: PushJob, _ outcome: PushOutcome) {
        metrics.count(outcome, provider)
        if outcome == .pushed { job.sync.receipts.pushed.add(1, ordering: .relaxed) }
        if outcome.isFailure { job.sync.receipts.pushFailed.add(1, ordering: .relaxed) }
    }
}

extension Array {
    /// Empties the array. - Returns: what it held.
    fileprivate mutating func drainAll() -> [Element] {
        defer { removeAll() }
        return self
    }
}
