import Glibc
import HTTP2

/// How one request on an `HTTP2Link` ended.
enum HTTP2LinkOutcome {
    case response(HTTP2Response)
    /// No response: why, and whether the server certainly did not act on the request (it may
    /// be sent again; the link already did so as long as its deadline allowed).
    case failed(String, unprocessed: Bool)
}

/// One HTTP/2 connection to a push provider (APNs, FCM: DESIGN §17), driven by an event loop
/// as a `LoopSource`; `HTTP2ClientConnection` decides the protocol, this class drives it over an
/// `OutboundSocket` (the lookup, connect, TLS and buffered I/O each connection makes).
///
/// It connects on demand (the first request), over TLS with ALPN `h2` (or cleartext h2c in
/// tests), keeps the connection while requests wait, pings it every `pingInterval`, and closes
/// it after `idleTimeout` without requests. Requests wait in order and start as streams free
/// up, at most `maxStartsPerTick` per tick (bounded work per tick) and only while less than
/// `maxOutputBytes` waits to be written (bounded memory). A request that gets no response
/// within `requestTimeout` of `send` fails.
///
/// Unprocessed requests — above a GOAWAY's last stream, or not one octet of their HEADERS
/// written before the connection died — are sent again on the next connection until their
/// deadline. A request written on a connection that died fails with `unprocessed: false`: the
/// server may have acted on it, and the caller decides.
///
/// A refused request (REFUSED_STREAM: the server is shedding load, or a stream raced a lowered
/// SETTINGS_MAX_CONCURRENT_STREAMS) is sent again as Go's `http2.Transport` does it: the first
/// time at once, then after the link's backoff for that request's n-th refusal (equal jitter:
/// between half and all of `backoff.ceiling(attempt: n - 2)`), while other requests go on; after
/// `maxRefusedResends` resends it fails with `unprocessed: true`, so that the caller's own
/// backoff takes over. An overloaded server thus sees a few resends per request, spaced out,
/// never one per round trip.
///
/// A lost connection, or one the server sent GOAWAY on, is made again after a backoff with full
/// jitter; the attempt count goes back to 0 only when a request gets a response, so a server
/// that answers every connection with GOAWAY (APNs sheds load that way, and takes fast
/// reconnects for abuse) sees them further and further apart. A server that refuses HTTP/2
/// (ALPN) or whose certificate is not trusted fails every waiting request at once, since
/// retrying cannot help until the configuration changes.
///
/// Invariants: every request given to `send` has its `done` called exactly once, on the loop's
/// thread (none after `abandon`), also when a callback calls `close()`; an unfinished request
/// is in exactly one of `queue`, `refused` (with its `resendAt`) and `streaming`; `queuedCount`
/// and `refusedCount` count the unfinished ones of the first two; `socket` is set exactly in
/// `.resolving`, `.connecting`, `.handshaking` and `.ready`; `connection`
/// is the state of the socket's HTTP/2 connection (a new one per socket).
final class HTTP2Link: LoopSource {
    struct Options {
        var host: String
        var port: UInt16
        /// TLS with ALPN `h2`; nil: cleartext HTTP/2 with prior knowledge (h2c, tests only).
        var tls: TLSClientContext?
        /// For logs and errors, e.g. "apns".
        var name: String
        /// From the start of a connect until the server's SETTINGS (TCP, TLS, the preface).
        var connectTimeout: UInt64 = 5_000_000_000
        var requestTimeout: UInt64 = 15_000_000_000
        var pingInterval: UInt64 = 60_000_000_000
        /// A connection with no request for this long is closed (DESIGN §17: providers keep
        /// idle connections open for a while, then drop them anyway).
        var idleTimeout: UInt64 = 300_000_000_000
        var backoff = Backoff(initial: .milliseconds(200), cap: .seconds(30))
        /// New streams started per tick: a burst of sends costs bounded work per tick.
        var maxStartsPerTick = 256
        /// Requests accepted and not answered at most; beyond, `send` fails at once.
        var maxWaiting = 100_000
        /// No new stream starts while more than this waits to be written.
        var maxOutputBytes = 1 << 20
        /// Windows, limits and the response body bound of each connection.
        var connection = HTTP2ClientConnection.Settings()

        init(host: String, port: UInt16, tls: TLSClientContext?, name: String) {
            self.host = host
            self.port = port
            self.tls = tls
            self.name = name
        }
    }

    enum State: Equatable {
        /// No connection, none needed (no request waits).
        case idle
        /// The last attempt failed or the connection was lost; the next attempt is at `retryAt`.
        case disconnected(retryAt: UInt64)
        /// The host's address is being looked up off the loop (`lookup`); checked again at
        /// `pollAt`, the attempt fails at `deadline`.
        case resolving(deadline: UInt64, pollAt: UInt64)
        /// TCP connecting; the attempt fails at `deadline`.
        case connecting(deadline: UInt64)
        /// TLS and the HTTP/2 preface, until the server's SETTINGS; fails at `deadline`.
        case handshaking(deadline: UInt64)
        case ready
        /// `close()` or `abandon()`: never connects again.
        case closed
    }

    /// One request the link accepted. A class: it moves between the queue and `streaming`, and
    /// the deadline list refers to it.
    private final class Entry {
        let id: RequestID
        let request: HTTP2Request
        let deadline: UInt64
        let done: (HTTP2LinkOutcome) -> Void
        /// Where its HEADERS begin in the connection's output (octets since it opened).
        var headersAt: UInt64 = 0
        var isFinished = false
        /// REFUSED_STREAM answers so far.
        var refusals = 0
        /// While in `refused`: when it may go again.
        var resendAt: UInt64?

        init(id: RequestID, request: HTTP2Request, deadline: UInt64, done: @escaping (HTTP2LinkOutcome) -> Void) {
            self.id = id
            self.request = request
            self.deadline = deadline
            self.done = done
        }
    }

    let options: Options
    private(set) var state = State.idle
    /// Why the connection went down or a request failed last (empty: nothing went wrong yet).
    private(set) var lastError = ""
    /// A refused request is sent again this many times at most (as Go's `http2.Transport`), then
    /// fails as unprocessed.
    static let maxRefusedResends = 6
    /// Connections opened so far (the server's SETTINGS came, and with it no GOAWAY or error).
    private(set) var connectionsOpened = 0
    /// A uniform random number in [0, 1) for the backoff's jitter.
    var random: () -> Double = { Double.random(in: 0..<1) }

    private var connection: HTTP2ClientConnection
    /// The connection under way or open (a new one per attempt).
    private var socket: OutboundSocket?
    private var isProtocolChecked = false
    /// Sockets opened so far: tells a reconnect's socket from the last one (`LoopWatch.socket`).
    private var connects: UInt64 = 0
    private var attempt = 0
    private var nextID: UInt64 = 0

    /// Requests not started, oldest first from `queueHead` (finished ones are skipped).
    private var queue: [Entry] = []
    private var queueHead = 0
    private var queuedCount = 0
    private var streaming: [RequestID: Entry] = [:]
    /// Refused requests waiting for their `resendAt`, in the order refused (finished ones skipped).
    private var refused: [Entry] = []
    private var refusedCount = 0
    /// No `resendAt` in `refused` is earlier.
    private var earliestResendAt = UInt64.max
    /// Every unfinished request in `send` order, which is deadline order (finished ones skipped).
    private var byDeadline: [Entry] = []
    private var byDeadlineHead = 0

    /// When the last request was sent or answered (for the idle close).
    private var lastActivity: UInt64
    private var lastPingAt: UInt64 = 0
    /// When our unanswered PING was sent.
    private var pingSentAt: UInt64?
    /// The connection ended in a protocol error or a GOAWAY and is to be dropped.
    private var connectionFailure: String?

    init(options: Options, now: UInt64) {
        self.options = options
        connection = HTTP2ClientConnection(settings: options.connection)
        lastActivity = now
    }

    deinit {
        precondition(socket == nil, "an HTTP/2 link is closed before it goes away")
    }

    /// Requests accepted and not answered yet (queued and in flight).
    var waiting: Int { queuedCount + refusedCount + streaming.count }
    /// Requests on streams now.
    var inFlight: Int { streaming.count }
    var isConnected: Bool { state == .ready }
    /// Octets waiting to be written on the connection.
    var unwrittenOutput: Int { socket?.unwrittenBytes ?? 0 }

    private var address: String { "\(options.host):\(options.port)" }

    /// Accepts `request`: sent when connected and a stream is free; connects if needed.
    /// `done` is called exactly once, on the loop's thread (at once when the link is closed or full).
    func send(_ request: HTTP2Request, now: UInt64, done: @escaping (HTTP2LinkOutcome) -> Void) {
        guard state != .closed else { return done(.failed("the \(options.name) link is closed", unprocessed: true)) }
        guard waiting < options.maxWaiting else {
            return done(
                .failed("\(options.maxWaiting) \(options.name) requests wait already (maxWaiting)", unprocessed: true))
        }
        nextID += 1
        let entry = Entry(id: RequestID(nextID), request: request, deadline: now + options.requestTimeout, done: done)
        queue.append(entry)
        queuedCount += 1
        byDeadline.append(entry)
        lastActivity = now
        if state == .idle { state = .disconnected(retryAt: now) }
    }

    /// Closes the link for good: requests in flight fail (possibly processed), waiting ones
    /// fail as unprocessed.
    func close() {
        guard state != .closed else { return }
        if socket != nil, case .ready = state {
            perform(connection.close(), now: 0)
            flush()
        }
        dropSocket()
        state = .closed
        failAll(inFlightWith: "the \(options.name) link was closed", queuedWith: "the \(options.name) link was closed")
    }

    /// Closes the link without calling anything back: its owner is going away, and the
    /// callbacks may refer to it.
    func abandon() {
        queue.removeAll()
        queuedCount = 0
        refused.removeAll()
        refusedCount = 0
        streaming.removeAll()
        byDeadline.removeAll()
        dropSocket()
        state = .closed
    }

    // MARK: - LoopSource

    var watch: LoopWatch? {
        switch state {
        case .connecting, .handshaking, .ready: return socket?.watch
        case .idle, .disconnected, .resolving, .closed: return nil
        }
    }

    var nextDeadline: UInt64? {
        var next = firstRequestDeadline
        func consider(_ deadline: UInt64) { next = min(next ?? deadline, deadline) }
        switch state {
        case .idle, .closed: return next
        case .disconnected(let retryAt): if queuedCount + refusedCount > 0 { consider(retryAt) }
        case .connecting(let deadline), .handshaking(let deadline): consider(deadline)
        case .resolving(let deadline, let pollAt): consider(min(deadline, pollAt))
        case .ready:
            if let pingSentAt {
                consider(pingSentAt + options.requestTimeout)
            } else {
                consider(lastPingAt + options.pingInterval)
            }
            if waiting == 0 { consider(lastActivity + options.idleTimeout) }
            if canStartStream { consider(0) }
            if connectionFailure != nil || (!connection.isAcceptingRequests && connection.openStreams == 0) {
                consider(0)
            }
        }
        if refusedCount > 0 { consider(earliestResendAt) }
        return next
    }

    func ready(readable: Bool, writable: Bool, hangup: Bool, now: UInt64) {
        switch state {
        case .connecting:
            guard writable || hangup, let socket else { return }
            advance(socket.connectEnded(), now: now)
        case .handshaking, .ready:
            guard let socket else { return }
            if socket.shouldRead(readable: readable, writable: writable, hangup: hangup) { read(now: now) }
            if self.socket === socket, socket.shouldFlush(readable: readable, writable: writable) { flush(now: now) }
        case .idle, .disconnected, .resolving, .closed:
            return
        }
    }

    func tick(now: UInt64) {
        expireRequests(now: now)
        releaseRefused(now: now)
        switch state {
        case .idle, .closed:
            return
        case .disconnected(let retryAt):
            if queuedCount + refusedCount == 0 {
                state = .idle
            } else if now >= retryAt {
                connect(now: now)
            }
        case .resolving(let deadline, _):
            guard let socket else { return }
            advance(socket.poll(now: now), now: now)
            if case .resolving = state, now >= deadline { lost("looking up \(options.host) timed out", now: now) }
        case .connecting(let deadline), .handshaking(let deadline):
            if now >= deadline { lost("connecting to \(address) (HTTP/2) timed out", now: now) }
        case .ready:
            tickReady(now: now)
        }
        if socket != nil { flush(now: now) }
    }

    private func tickReady(now: UInt64) {
        if let failure = connectionFailure { return lost(failure, now: now) }
        if let pingSentAt, now >= pingSentAt + options.requestTimeout {
            return lost("\(address) did not answer a PING within \(options.requestTimeout / 1_000_000) ms", now: now)
        }
        if !connection.isAcceptingRequests, connection.openStreams == 0 {
            // After GOAWAY (or stream identifiers ran out): the next connection takes the rest.
            return retire(now: now)
        }
        if waiting == 0, now >= lastActivity + options.idleTimeout { return retire(now: now) }
        if pingSentAt == nil, now >= lastPingAt + options.pingInterval {
            pingSentAt = now
            lastPingAt = now
            perform(connection.ping(now: now), now: now)
        }
        startStreams(now: now)
    }

    // MARK: - Connecting

    /// Looks the host up off the loop (an IP literal at once), then connects.
    private func connect(now: UInt64) {
        connects += 1
        let socket = OutboundSocket(host: options.host, port: options.port, tls: options.tls, generation: connects)
        self.socket = socket
        state = .resolving(deadline: now + options.connectTimeout, pollAt: now)
        advance(socket.start(now: now), now: now)
    }

    /// Follows the socket's connecting: each phase has `connectTimeout` (the lookup, then TCP).
    private func advance(_ progress: OutboundSocket.Progress, now: UInt64) {
        switch progress {
        case .failed(let reason): lost(reason, now: now)
        case .connected: startHTTP2(now: now)
        case .waiting:
            switch socket?.phase {
            case .resolving(let pollAt)?:
                if case .resolving(let deadline, _) = state { state = .resolving(deadline: deadline, pollAt: pollAt) }
            case .connecting?:
                if case .resolving = state { state = .connecting(deadline: now + options.connectTimeout) }
            case .initial?, .connected?, .closed?, nil:
                return
            }
        }
    }

    /// TCP is up: TLS (if any) and the preface start; the link is ready at the server's SETTINGS.
    private func startHTTP2(now: UInt64) {
        isProtocolChecked = options.tls == nil
        connection = HTTP2ClientConnection(settings: options.connection)
        connectionFailure = nil
        pingSentAt = nil
        lastPingAt = now
        state = .handshaking(deadline: now + options.connectTimeout)
        perform(connection.start(), now: now)
        flush(now: now)
    }

    /// After the TLS handshake: the server must have chosen `h2` (RFC 9113 §3.2).
    /// - Returns: false when it did not (the link is down, every waiting request failed).
    private func checkProtocol(now: UInt64) -> Bool {
        guard !isProtocolChecked, let socket, socket.isHandshakeDone else { return true }
        isProtocolChecked = true
        guard socket.selectedProtocol == "h2" else {
            let refusal = "the server at \(address) did not agree to HTTP/2 (ALPN)"
            lost(refusal, now: now)
            failAll(inFlightWith: refusal, queuedWith: refusal)
            return false
        }
        return true
    }

    // MARK: - Streams

    /// Whether a queued request can start now: a stream is free and the output is not full.
    private var canStartStream: Bool {
        queuedCount > 0 && connection.availableStreams > 0 && unwrittenOutput < options.maxOutputBytes
    }

    private func startStreams(now: UInt64) {
        var budget = options.maxStartsPerTick
        while budget > 0, canStartStream {
            let entry = queue[queueHead]
            queueHead += 1
            guard !entry.isFinished else { continue }
            queuedCount -= 1
            entry.headersAt = socket?.queuedTotal ?? 0
            streaming[entry.id] = entry
            perform(connection.send(request: entry.request, id: entry.id), now: now)
            budget -= 1
        }
        compactQueue()
    }

    private func compactQueue() {
        if queuedCount == 0 {
            queue.removeAll(keepingCapacity: true)
            queueHead = 0
        } else if queueHead > 1024, queueHead > queue.count / 2 {
            queue.removeFirst(queueHead)
            queueHead = 0
        }
    }

    /// Sends a refused request again later: at once after its first refusal, then after the
    /// backoff of its refusals so far, between half and all of the ceiling (equal jitter).
    private func resendLater(_ entry: Entry, now: UInt64) {
        entry.refusals += 1
        var at = now
        if entry.refusals > 1 {
            let ceiling = options.backoff.ceiling(attempt: entry.refusals - 2)
            at += UInt64((ceiling / 2 + ceiling * (random() / 2)).nanoseconds)
        }
        entry.resendAt = at
        refused.append(entry)
        refusedCount += 1
        earliestResendAt = min(earliestResendAt, at)
    }

    /// Moves the refused requests whose time came to the front of the queue.
    private func releaseRefused(now: UInt64) {
        guard !refused.isEmpty, now >= earliestResendAt else { return }
        var due: [Entry] = []
        var later: [Entry] = []
        earliestResendAt = .max
        for entry in refused where !entry.isFinished {
            guard let at = entry.resendAt, at > now else {
                entry.resendAt = nil
                due.append(entry)
                continue
            }
            later.append(entry)
            earliestResendAt = min(earliestResendAt, at)
        }
        refused = later
        refusedCount = later.count
        requeue(due)
    }

    /// Puts unprocessed requests back at the front of the queue, in the order given.
    private func requeue(_ entries: [Entry]) {
        guard !entries.isEmpty else { return }
        guard state != .closed else {
            // A callback called `close()` after these left `streaming`: they fail like the rest.
            for entry in entries { finish(entry, .failed("the \(options.name) link was closed", unprocessed: true)) }
            return
        }
        queue.replaceSubrange(queueHead..<queueHead, with: entries)
        queuedCount += entries.count
    }

    private func perform(_ actions: [HTTP2ClientConnection.Action], now: UInt64) {
        var resend: [Entry] = []
        for action in actions {
            switch action {
            case .write(let bytes):
                socket?.enqueue(bytes)
            case .response(let id, let response):
                guard let entry = streaming.removeValue(forKey: id) else { continue }
                lastActivity = now
                attempt = 0
                finish(entry, .response(response))
            case .failed(let id, let error):
                guard let entry = streaming.removeValue(forKey: id) else { continue }
                lastActivity = now
                let mayResend = error.isUnprocessed && state != .closed && now < entry.deadline
                if mayResend, error == .refused, entry.refusals < Self.maxRefusedResends {
                    resendLater(entry, now: now)
                } else if mayResend, error != .refused {
                    resend.append(entry)
                } else if error == .refused {
                    lastError = "\(options.name): \(error)"
                    let why = "\(error.description) (\(entry.refusals + 1) times)"
                    finish(entry, .failed(why, unprocessed: true))
                } else {
                    lastError = "\(options.name): \(error)"
                    finish(entry, .failed(error.description, unprocessed: error.isUnprocessed))
                }
            case .pingAcked:
                pingSentAt = nil
            case .goAway(let lastStreamID, let code, let debug):
                lastError =
                    "\(address) sent GOAWAY (\(code), last stream \(lastStreamID))\(debug.isEmpty ? "" : ": \(debug)")"
                Log.info("http2 link: the server goes away", [("link", options.name), ("reason", lastError)])
                if code != .noError { connectionFailure = lastError }
            case .connectionError(let error):
                connectionFailure = "\(address): \(error)"
            }
        }
        requeue(resend)
    }

    private func finish(_ entry: Entry, _ outcome: HTTP2LinkOutcome) {
        guard !entry.isFinished else { return }
        entry.isFinished = true
        entry.done(outcome)
    }

    /// Fails requests whose deadline passed: a waiting one as unprocessed, one in flight (its
    /// stream cancelled) as possibly processed.
    private func expireRequests(now: UInt64) {
        while byDeadlineHead < byDeadline.count {
            let entry = byDeadline[byDeadlineHead]
            guard entry.isFinished || now >= entry.deadline else { break }
            byDeadlineHead += 1
            guard !entry.isFinished else { continue }
            let seconds = Double(options.requestTimeout) / 1e9
            if streaming.removeValue(forKey: entry.id) != nil {
                perform(connection.cancel(entry.id), now: now)
                finish(entry, .failed("no response from \(address) within \(seconds) s", unprocessed: false))
            } else {
                if entry.resendAt != nil { refusedCount -= 1 } else { queuedCount -= 1 }
                let why = lastError.isEmpty ? "" : " (\(lastError))"
                finish(entry, .failed("not sent to \(address) within \(seconds) s\(why)", unprocessed: true))
            }
        }
        if byDeadlineHead == byDeadline.count {
            byDeadline.removeAll(keepingCapacity: true)
            byDeadlineHead = 0
        } else if byDeadlineHead > 1024, byDeadlineHead > byDeadline.count / 2 {
            byDeadline.removeFirst(byDeadlineHead)
            byDeadlineHead = 0
        }
        compactQueue()
    }

    private var firstRequestDeadline: UInt64? {
        byDeadline[byDeadlineHead...].first { !$0.isFinished }?.deadline
    }

    // MARK: - I/O

    private func read(now: UInt64) {
        while let socket {
            let result = socket.read()
            guard checkProtocol(now: now) else { return }
            switch result {
            case .failed(let reason):
                return lost("reading from \(address) failed: \(reason)", now: now)
            case .wouldBlock:
                return
            case .ended:
                return lost("\(address) closed the connection", now: now)
            case .bytes(let bytes, let more):
                perform(connection.received(bytes), now: now)
                if case .handshaking = state, connection.state != .awaitingSettings {
                    // `attempt` stays: a server may answer SETTINGS and then GOAWAY at once; only a
                    // response shows the connection works.
                    state = .ready
                    if connection.state == .open { connectionsOpened += 1 }
                }
                if connectionFailure != nil || !more { return }
            }
        }
    }

    /// Writes what waits, as far as the socket takes it.
    private func flush(now: UInt64 = 0) {
        guard let socket, socket.unwrittenBytes > 0 else { return }
        defer { connection.written(through: socket.writtenTotal) }
        if case .failed(let reason) = socket.flush() {
            return lost("writing to \(address) failed: \(reason)", now: now)
        }
        _ = checkProtocol(now: now)
    }

    // MARK: - Ending a connection

    /// The connection is lost (or never came up): requests on it fail unless not one octet of
    /// their HEADERS left, waiting ones stay, and a new attempt follows the backoff.
    private func lost(_ reason: String, now: UInt64) {
        guard state != .closed else { return }
        let wasReady = state == .ready
        let certificateRefused = socket?.certificateProblem != nil
        let writtenTotal = socket?.writtenTotal ?? 0
        lastError = reason
        dropSocket()
        reconnectLater(now: now)
        if wasReady { Log.warning("http2 link lost", [("link", options.name), ("reason", reason)]) }
        var resend: [Entry] = []
        for entry in streaming.values.sorted(by: { $0.id.value < $1.id.value }) {
            if entry.headersAt >= writtenTotal, now < entry.deadline {
                resend.append(entry)
            } else {
                finish(entry, .failed("\(options.name): \(reason)", unprocessed: entry.headersAt >= writtenTotal))
            }
        }
        streaming.removeAll()
        requeue(resend)
        if certificateRefused { failAll(inFlightWith: reason, queuedWith: reason) }
    }

    /// Closes a connection that has nothing left to do (idle, or drained after GOAWAY); a
    /// request still waiting starts the next one after the backoff.
    private func retire(now: UInt64) {
        perform(connection.close(), now: now)
        flush(now: now)
        dropSocket()
        if queuedCount + refusedCount > 0 {
            reconnectLater(now: now)
        } else {
            state = .idle
        }
    }

    /// The next connection is made after the backoff of the attempts since the last response.
    private func reconnectLater(now: UInt64) {
        let delay = options.backoff.delay(attempt: attempt, random: random())
        attempt += 1
        state = .disconnected(retryAt: now + UInt64(delay.nanoseconds))
    }

    private func dropSocket() {
        socket?.close()
        socket = nil
        connectionFailure = nil
        pingSentAt = nil
    }

    private func failAll(inFlightWith inFlightReason: String, queuedWith queuedReason: String) {
        let open = streaming.values.sorted { $0.id.value < $1.id.value }
        streaming.removeAll()
        for entry in open { finish(entry, .failed(inFlightReason, unprocessed: false)) }
        let waiting = refused.filter { !$0.isFinished } + queue[queueHead...].filter { !$0.isFinished }
        queue.removeAll()
        queueHead = 0
        queuedCount = 0
        refused.removeAll()
        refusedCount = 0
        for entry in waiting { finish(entry, .failed(queuedReason, unprocessed: true)) }
    }
}

@available(*, unavailable)
extension HTTP2Link: Sendable {}
