import HTTP1

/// The hub's HTTP/1.1 client (DESIGN §18: JWKS fetches, webhook deliveries), on the control
/// plane's loop and thread. It owns a fixed set of connection slots (`HTTP1Connection`, each a
/// `LoopSource`: the loop's sources are fixed at start), given to origins as requests come:
/// at most `maxPerOrigin` to one origin, kept open between requests (keep-alive, closed after
/// `idleTimeout` without one).
///
/// Requests wait in one queue per origin; a free slot serves the origins in turn (round robin),
/// and an origin with fewer connections than another may take an idle one of the other's, so
/// that a burst to one origin cannot starve the rest. At most `maxWaiting` requests wait;
/// beyond, `send` fails at once. The client sends each request once: a failure is reported,
/// never retried here (the callers retry: the JWKS fetcher with its backoff, webhooks with
/// theirs).
///
/// Invariants: every request given to `send` has its `done` called exactly once, on the loop's
/// thread, within its timeout of `now` — at once when it cannot be accepted; a waiting request
/// is in exactly one origin's queue and in `deadlines`, a started one in exactly one slot;
/// `waitingCount` counts the unfinished requests in the queues; `rotation` lists exactly the
/// origins with waiting requests.
final class HTTP1Client: HTTPFetching, LoopDriven, LoopSource {
    struct Options {
        /// Connection slots: connections at once, to all origins together.
        var connections = 16
        /// Connections at once to one origin.
        var maxPerOrigin = 8
        /// Requests accepted and not started at most.
        var maxWaiting = 100_000
        /// A connection with no request for this long is closed (servers drop idle ones too,
        /// nginx after 75 s; reconnecting costs a round trip or two).
        var idleTimeout: UInt64 = 30_000_000_000
        /// For https origins (nil: https requests fail).
        var tls: TLSClientContext?
        /// Sent when a request has no `User-Agent` of its own.
        var userAgent = "PushHub/\(BuildInfo.version)"

        init(tls: TLSClientContext?) { self.tls = tls }
    }

    /// One accepted request. A class: it moves from its queue to a slot, and `deadlines` holds it.
    final class Entry: HasDeadline {
        let origin: HTTPOrigin
        let method: String
        /// The request as written (`HTTP1RequestWriter`).
        let bytes: [UInt8]
        let maxResponseBodyBytes: Int
        let timeout: UInt64
        let deadline: UInt64
        let done: (HTTP1Outcome) -> Void
        var isFinished = false
        var scheduledDeadline: UInt64?
        var timerIndex: Int32 = -1

        init(
            origin: HTTPOrigin, request: HTTP1Request, bytes: [UInt8], timeout: UInt64, now: UInt64,
            done: @escaping (HTTP1Outcome) -> Void
        ) {
            self.origin = origin
            method = request.method
            self.bytes = bytes
            maxResponseBodyBytes = request.maxResponseBodyBytes
            self.timeout = timeout
            deadline = now + timeout
            self.done = done
        }
    }

    /// One origin's waiting requests, oldest first from `head` (finished ones are skipped).
    private struct Queue {
        var entries: [Entry] = []
        var head = 0
        var count = 0
    }

    let options: Options
    private let writer: HTTP1RequestWriter
    private let slots: [HTTP1Connection]
    private var queues: [HTTPOrigin: Queue] = [:]
    /// The origins with waiting requests, served in turn from `cursor`.
    private var rotation: [HTTPOrigin] = []
    private var cursor = 0
    /// The waiting requests by deadline.
    private var deadlines = DeadlineHeap<Entry>()
    private(set) var waitingCount = 0
    /// A request came or a slot freed up since the last dispatch.
    private var needsDispatch = false
    private var isClosed = false

    init(options: Options) {
        precondition(options.connections > 0 && options.maxPerOrigin > 0, "a client has connections")
        self.options = options
        writer = HTTP1RequestWriter(userAgent: options.userAgent)
        slots = (0..<options.connections).map { _ in
            HTTP1Connection(tls: options.tls, idleTimeout: options.idleTimeout)
        }
        for slot in slots {
            slot.finished = { [unowned self] entry, outcome in self.finish(entry, outcome) }
        }
    }

    /// The client itself (its queue's deadlines) first, then its connection slots: a request sent
    /// during a tick starts in the same tick.
    var sources: [LoopSource] { [self] + slots }

    /// Requests on connections now.
    var inFlight: Int { slots.count(where: { !$0.isAvailable }) }
    /// Open connections, idle or not, by origin.
    func connections(to origin: HTTPOrigin) -> Int { slots.count(where: { $0.origin == origin }) }

    /// The TLS context for https origins: the CAs of `caFile` (nil: the system's), ALPN `http/1.1`.
    static func tlsContext(caFile: String?) throws(TLSError) -> TLSClientContext {
        try TLSClientContext(caFile: caFile, alpn: ["http/1.1"])
    }

    func send(
        _ request: HTTP1Request, to origin: HTTPOrigin, timeout: UInt64, now: UInt64,
        done: @escaping (HTTP1Outcome) -> Void
    ) {
        guard !isClosed else { return done(.failed("the outbound HTTP client is closed")) }
        guard waitingCount < options.maxWaiting else {
            return done(.failed("outbound HTTP: queue full (\(options.maxWaiting) requests wait)"))
        }
        guard !origin.isTLS || options.tls != nil else {
            return done(.failed("\(origin): the outbound HTTP client has no TLS context"))
        }
        let bytes: [UInt8]
        do {
            bytes = try writer.write(request, to: origin)
        } catch {
            return done(.failed("the request to \(origin) cannot be sent: \(error)"))
        }
        let entry = Entry(origin: origin, request: request, bytes: bytes, timeout: timeout, now: now, done: done)
        if queues[origin] == nil { rotation.append(origin) }
        queues[origin, default: Queue()].entries.append(entry)
        queues[origin]?.count += 1
        waitingCount += 1
        deadlines.schedule(entry, at: entry.deadline)
        needsDispatch = true
    }

    /// Fails every request (those on connections first), closes the connections; `send` fails
    /// at once from now on.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        for slot in slots { slot.close(failing: "the outbound HTTP client was closed") }
        let waiting = rotation.flatMap { origin in queues[origin].map { Array($0.entries[$0.head...]) } ?? [] }
        queues.removeAll()
        rotation.removeAll()
        deadlines = DeadlineHeap()
        waitingCount = 0
        for entry in waiting { finish(entry, .failed("the outbound HTTP client was closed")) }
    }

    // MARK: - LoopSource (the queue)

    var watch: LoopWatch? { nil }

    var nextDeadline: UInt64? {
        guard !isClosed else { return nil }
        return needsDispatch ? 0 : deadlines.nextDeadline
    }

    func ready(readable: Bool, writable: Bool, hangup: Bool, now: UInt64) {}

    func tick(now: UInt64) {
        expireWaiting(now: now)
        if needsDispatch { dispatch(now: now) }
    }

    // MARK: - Dispatch

    /// Starts waiting requests on free slots, taking the origins in turn.
    private func dispatch(now: UInt64) {
        needsDispatch = false
        var blocked: Set<HTTPOrigin> = []
        while !isClosed, let index = nextOrigin(skipping: blocked) {
            let origin = rotation[index]
            guard let slot = slot(for: origin) else {
                blocked.insert(origin)
                continue
            }
            guard let entry = takeFirst(of: origin, at: index) else {
                preconditionFailure("an origin in the rotation has an unfinished request waiting")
            }
            deadlines.remove(entry)
            slot.start(entry, now: now)
        }
    }

    /// The index in `rotation` of the next origin to serve, from `cursor` on, not in `blocked`.
    private func nextOrigin(skipping blocked: Set<HTTPOrigin>) -> Int? {
        guard !rotation.isEmpty else { return nil }
        for step in 0..<rotation.count {
            let index = (cursor + step) % rotation.count
            if !blocked.contains(rotation[index]) { return index }
        }
        return nil
    }

    /// Removes and returns the oldest waiting request of `origin` (at `index` in `rotation`);
    /// the turn passes to the next origin.
    private func takeFirst(of origin: HTTPOrigin, at index: Int) -> Entry? {
        guard var queue = queues.removeValue(forKey: origin) else { return nil }
        var taken: Entry?
        while taken == nil, queue.head < queue.entries.count {
            let entry = queue.entries[queue.head]
            queue.head += 1
            if !entry.isFinished { taken = entry }
        }
        if taken != nil {
            queue.count -= 1
            waitingCount -= 1
        }
        if queue.count == 0 {
            rotation.remove(at: index)
            cursor = rotation.isEmpty ? 0 : index % rotation.count
        } else {
            if queue.head > 1024, queue.head > queue.entries.count / 2 {
                queue.entries.removeFirst(queue.head)
                queue.head = 0
            }
            queues[origin] = queue
            cursor = (index + 1) % rotation.count
        }
        return taken
    }

    /// A slot for `origin`'s next request: its idle connection; else, below `maxPerOrigin`, a
    /// vacant slot, or an idle connection to an origin that waits for nothing or has at least
    /// two connections more (so shares even out as slots free up); nil when none may serve now.
    private func slot(for origin: HTTPOrigin) -> HTTP1Connection? {
        var mine = 0
        var vacant: HTTP1Connection?
        var idleElsewhere: [HTTP1Connection] = []
        for slot in slots {
            if slot.origin == origin {
                if slot.isIdle { return slot }
                mine += 1
            } else if slot.state == .vacant {
                vacant = vacant ?? slot
            } else if slot.isIdle {
                idleElsewhere.append(slot)
            }
        }
        guard mine < options.maxPerOrigin else { return nil }
        if let vacant { return vacant }
        return idleElsewhere.first { slot in
            guard let other = slot.origin else { return false }
            return queues[other] == nil || connections(to: other) >= mine + 2
        }
    }

    // MARK: - Ending requests

    private func finish(_ entry: HTTP1Client.Entry, _ outcome: HTTP1Outcome) {
        guard !entry.isFinished else { return }
        entry.isFinished = true
        needsDispatch = true
        entry.done(outcome)
    }

    /// Fails the waiting requests whose deadline passed before a slot took them.
    private func expireWaiting(now: UInt64) {
        while let entry = deadlines.popDue(now: now) {
            guard !entry.isFinished, var queue = queues[entry.origin] else { continue }
            queue.count -= 1
            waitingCount -= 1
            if queue.count == 0 {
                queues[entry.origin] = nil
                if let index = rotation.firstIndex(of: entry.origin) {
                    rotation.remove(at: index)
                    if index < cursor { cursor -= 1 }
                    cursor = rotation.isEmpty ? 0 : cursor % rotation.count
                }
            } else {
                queues[entry.origin] = queue
            }
            let seconds = Double(entry.timeout) / 1e9
            let busy = connections(to: entry.origin)
            finish(
                entry,
                .failed(
                    "not sent to \(entry.origin) within \(seconds) s: no connection was free "
                        + "(\(busy) to it of at most \(options.maxPerOrigin), \(inFlight) busy of \(slots.count))"))
        }
    }
}

@available(*, unavailable)
extension HTTP1Client: Sendable {}
