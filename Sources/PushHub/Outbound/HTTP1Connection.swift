import HTTP1

/// One of `HTTP1Client`'s connection slots, driven by the control plane's loop as a
/// `LoopSource`: at most one request at a time (no pipelining), on a connection to the origin
/// the slot is assigned to, kept open between requests while the server allows it (RFC 9112
/// §9.3) and for at most `idleTimeout` without one.
///
/// A request's `deadline` bounds all of it — connecting, TLS, writing, the response; past it
/// the request fails and its connection is closed. So does any failure in the middle of a
/// request (an I/O error, a response the parser refuses, bytes after the response): a
/// connection is reused only after a clean, complete exchange. The request is never written
/// twice: a reused connection the server closed meanwhile fails the request (the callers retry).
///
/// Invariants: `entry` is set exactly in `.connecting` and `.exchanging`, `parser` exactly in
/// `.exchanging`; `socket` and `origin` are set exactly when not `.vacant`; `finished` is
/// called once per request given to `start`, after the slot's state is settled (so the
/// callback may start another request here, or close the client).
final class HTTP1Connection: LoopSource {
    enum State: Equatable {
        /// No connection, no request: free for any origin.
        case vacant
        /// Reaching `origin` (lookup, TCP) for `entry`.
        case connecting
        /// `entry`'s request is being written and its answer read.
        case exchanging
        /// Keep-alive: connected to `origin` with no request, since `since`.
        case idle(since: UInt64)
    }

    /// Calls back with each request's outcome (set by the client).
    var finished: (HTTP1Client.Entry, HTTP1Outcome) -> Void = { _, _ in }
    private(set) var state = State.vacant
    private(set) var origin: HTTPOrigin?
    private let tls: TLSClientContext?
    private let idleTimeout: UInt64
    private var socket: OutboundSocket?
    private var entry: HTTP1Client.Entry?
    private var parser: HTTP1ResponseParser?
    /// Sockets opened so far (each socket's `generation`).
    private var connects: UInt64 = 0
    /// Requests answered on the current connection (1 + reuses).
    private(set) var exchangesOnConnection = 0

    init(tls: TLSClientContext?, idleTimeout: UInt64) {
        self.tls = tls
        self.idleTimeout = idleTimeout
    }

    /// No request in hand: the client may give it one (`start`).
    var isAvailable: Bool {
        switch state {
        case .vacant, .idle: true
        case .connecting, .exchanging: false
        }
    }

    var isIdle: Bool {
        if case .idle = state { return true }
        return false
    }

    /// Starts `entry`'s request: on the idle connection if it goes to the same origin, else on a
    /// new connection (an idle one to another origin is closed first).
    func start(_ entry: HTTP1Client.Entry, now: UInt64) {
        precondition(isAvailable, "a connection slot takes one request at a time")
        if isIdle, origin == entry.origin, let socket {
            self.entry = entry
            exchangesOnConnection += 1
            return beginExchange(on: socket, now: now)
        }
        dropConnection()
        self.entry = entry
        origin = entry.origin
        connects += 1
        exchangesOnConnection = 1
        let socket = OutboundSocket(
            host: entry.origin.host, port: entry.origin.port, tls: entry.origin.isTLS ? tls : nil,
            generation: connects)
        self.socket = socket
        state = .connecting
        advance(socket.start(now: now), now: now)
    }

    /// Closes the connection; a request in hand fails with `reason`.
    func close(failing reason: String) {
        if entry != nil {
            fail(reason)
        } else {
            dropConnection()
        }
    }

    // MARK: - LoopSource

    var watch: LoopWatch? { socket?.watch }

    var nextDeadline: UInt64? {
        switch state {
        case .vacant: return nil
        case .idle(let since): return since + idleTimeout
        case .connecting, .exchanging:
            guard let entry else { return nil }
            if case .resolving(let pollAt)? = socket?.phase { return min(pollAt, entry.deadline) }
            return entry.deadline
        }
    }

    func ready(readable: Bool, writable: Bool, hangup: Bool, now: UInt64) {
        guard let socket else { return }
        switch state {
        case .vacant: return
        case .connecting:
            guard socket.phase == .connecting, writable || hangup else { return }
            advance(socket.connectEnded(), now: now)
        case .exchanging, .idle:
            if socket.shouldRead(readable: readable, writable: writable, hangup: hangup) { read(now: now) }
            if self.socket === socket, state == .exchanging, socket.shouldFlush(readable: readable, writable: writable)
            {
                flush()
            }
        }
    }

    func tick(now: UInt64) {
        switch state {
        case .vacant: return
        case .idle(let since):
            if now >= since + idleTimeout { dropConnection() }
        case .connecting:
            guard let entry, let socket else { return }
            if now >= entry.deadline { return fail(timedOut(entry, connecting: true)) }
            if case .resolving = socket.phase { advance(socket.poll(now: now), now: now) }
        case .exchanging:
            guard let entry else { return }
            if now >= entry.deadline { return fail(timedOut(entry, connecting: false)) }
            flush()
        }
    }

    // MARK: - The exchange

    private func advance(_ progress: OutboundSocket.Progress, now: UInt64) {
        switch progress {
        case .waiting: return
        case .failed(let reason): fail(reason)
        case .connected:
            guard let socket else { return }
            beginExchange(on: socket, now: now)
        }
    }

    private func beginExchange(on socket: OutboundSocket, now: UInt64) {
        guard let entry else { return }
        parser = HTTP1ResponseParser(requestMethod: entry.method, maxBodyBytes: entry.maxResponseBodyBytes)
        state = .exchanging
        socket.enqueue(entry.bytes)
        flush()
    }

    private func flush() {
        guard let socket else { return }
        if case .failed(let reason) = socket.flush() { fail("writing to \(socket.address) failed: \(advice(reason))") }
    }

    private func read(now: UInt64) {
        while let socket = self.socket {
            switch socket.read() {
            case .wouldBlock: return
            case .failed(let reason):
                guard entry != nil else { return dropConnection() }
                return fail("reading from \(socket.address) failed: \(advice(reason))")
            case .ended:
                guard var parser, entry != nil else { return dropConnection() }
                do {
                    let response = try parser.endOfStream()
                    return complete(response, reusable: false, now: now)
                } catch {
                    return fail("\(socket.address): \(error)")
                }
            case .bytes(let bytes, let more):
                // An idle connection has nothing to read: bytes there (a late 408, garbage) end it.
                guard var parser, entry != nil else { return dropConnection() }
                let step: HTTP1ResponseParser.Step
                do {
                    step = try parser.feed(bytes)
                } catch {
                    return fail("\(socket.address): \(error)")
                }
                self.parser = parser
                if case .response(let response, let isKeepAlive, let leftover) = step {
                    let reusable = isKeepAlive && leftover == 0 && !more && socket.unwrittenBytes == 0
                    return complete(response, reusable: reusable, now: now)
                }
                if !more { return }
            }
        }
    }

    // MARK: - Ending a request

    private func complete(_ response: HTTP1Response, reusable: Bool, now: UInt64) {
        guard let entry else { return }
        self.entry = nil
        parser = nil
        if reusable {
            state = .idle(since: now)
        } else {
            dropConnection()
        }
        finished(entry, .response(response))
    }

    /// The request in hand fails and its connection is closed.
    private func fail(_ reason: String) {
        let entry = self.entry
        dropConnection()
        if let entry { finished(entry, .failed(reason)) }
    }

    private func dropConnection() {
        socket?.close()
        socket = nil
        origin = nil
        entry = nil
        parser = nil
        state = .vacant
    }

    private func timedOut(_ entry: HTTP1Client.Entry, connecting: Bool) -> String {
        let seconds = Double(entry.timeout) / 1e9
        let address = "\(entry.origin.host):\(entry.origin.port)"
        if connecting { return "could not connect to \(address) within \(seconds) s" }
        if socket?.isHandshakeDone == false {
            return "the TLS handshake with \(address) did not end within \(seconds) s"
        }
        return "no response from \(address) within \(seconds) s"
    }

    /// A certificate refusal says how to trust it.
    private func advice(_ reason: String) -> String {
        guard socket?.certificateProblem != nil else { return reason }
        return reason + "; give its CA with --outbound-ca FILE"
    }
}

@available(*, unavailable)
extension HTTP1Connection: Sendable {}
