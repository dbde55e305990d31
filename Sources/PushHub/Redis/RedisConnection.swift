import Glibc

/// One connection to Redis, driven by an event loop as a `LoopSource` (DESIGN §11: "the RESP
/// client is ours, non-blocking, on the event loop machinery, pipelined").
///
/// Commands are pipelined: `send` queues a command's bytes and its reply handler; the bytes go
/// out at the end of the tick with the others, and replies are matched to handlers in order.
/// The link signs in (AUTH, SELECT, CLIENT SETNAME) on every connect before it is `ready`; a
/// command sent while it is not ready fails at once with `.notConnected` (the caller decides to
/// answer 503 or to try later). A lost link fails every command waiting for a reply (Redis may
/// have run them: `outcomeUnknown`) and reconnects after a backoff with full jitter. A command
/// without a reply for `commandTimeout` drops the link: the reply stream can no longer be trusted
/// to be in step.
///
/// A subscriber link (`pushHandler` set) also takes pub/sub messages (RESP2 arrays that start
/// with "message" or "pmessage") that answer no command.
///
/// Invariants: `pending` holds, in order, one handler per command written or queued since the
/// link came up; `socket` is open exactly in `.connecting`, `.signingIn` and `.ready`; every
/// handler is called exactly once.
final class RedisConnection: LoopSource {
    struct Options {
        var url: RedisURL
        /// The name Redis lists for this link (`CLIENT LIST`), e.g. "pushhub:hub-a:commands".
        var clientName: String?
        var commandTimeout: UInt64 = 5_000_000_000
        var connectTimeout: UInt64 = 2_000_000_000
        var backoff = Backoff(initial: .milliseconds(100), cap: .seconds(5))
        var limits = RESPParser.Limits()
        /// Where to connect instead of the URL's host and port, asked before each attempt (nil:
        /// not known yet — the attempt fails and is retried). Redis Sentinel's answer.
        var locate: (() -> SocketAddress?)?
        /// Check on sign-in that the server is a master (`ROLE`): after a failover the old master
        /// comes back as a replica, and a hub must not stay on it.
        var requireMaster = false
        /// TLS to Redis (`rediss://`), its certificate checked for the address connected to.
        var tls: TLSClientContext?

        init(url: RedisURL, clientName: String? = nil) {
            self.url = url
            self.clientName = clientName
        }
    }

    enum State: Equatable {
        /// Not connected; the next attempt is at `retryAt`.
        case disconnected(retryAt: UInt64)
        case connecting(deadline: UInt64)
        /// Connected, the sign-in commands sent, their replies awaited.
        case signingIn
        case ready
        /// `close()` was called: never connects again.
        case closed
    }

    typealias ReplyHandler = (Result<RESPValue, RedisError>) -> Void

    private struct Pending {
        var label: String
        var deadline: UInt64
        var handler: ReplyHandler
    }

    let options: Options
    private(set) var state: State
    /// Why the link went down last (empty: it never did).
    private(set) var lastError = ""
    /// The last attempt failed because TLS did not trust the server's certificate: retrying
    /// will not help until the configuration changes.
    private(set) var certificateRefused = false
    /// Called each time the link is signed in and ready (e.g. to subscribe again).
    var onReady: (() -> Void)?
    /// Called when a ready link goes down, with the reason.
    var onDown: ((String) -> Void)?
    /// Pub/sub messages (a subscriber link only).
    var pushHandler: ((RESPValue) -> Void)?
    /// A uniform random number in [0, 1) for the backoff's jitter.
    var random: () -> Double = { Double.random(in: 0..<1) }

    private var socket: Socket?
    /// The socket's TLS (`options.tls`), made with the socket.
    private var tls: TLSStream?
    private var parser: RESPParser
    private var output: [UInt8] = []
    private var pending: [Pending] = []
    private var pendingHead = 0
    private var attempt = 0
    /// Sockets opened so far: tells a reconnect's socket from the last one (`LoopWatch.socket`).
    private var connects: UInt64 = 0
    private var readBuffer = [UInt8](repeating: 0, count: 64 << 10)
    /// The address of the last connect attempt.
    private(set) var address: SocketAddress

    /// A link that makes its first connect at `now`.
    init(options: Options, now: UInt64) {
        self.options = options
        parser = RESPParser(limits: options.limits)
        state = .disconnected(retryAt: now)
        address = options.url.address
    }

    deinit {
        precondition(socket == nil, "a Redis link is closed before it goes away")
    }

    var isReady: Bool { state == .ready }

    /// Why the link is not ready, for a message: the last failure, or "connecting" before the first.
    var notReadyReason: String { lastError.isEmpty ? "connecting" : lastError }

    /// Commands sent and not yet answered.
    var awaitingReplies: Int { pending.count - pendingHead }

    /// Queues `command`; `reply` gets its result (at once, with `.notConnected`, when the link is
    /// not ready). Replies come in the order commands were sent.
    func send(_ command: RedisCommand, now: UInt64, reply: @escaping ReplyHandler) {
        guard state == .ready else {
            reply(.failure(.notConnected(command: command.label, reason: notReadyReason)))
            return
        }
        enqueue(command, now: now, reply: reply)
    }

    /// Drops the connection now and connects again after the backoff (e.g. the server turned out
    /// to be a replica); commands waiting for replies fail with `.connectionLost`.
    func reconnect(because reason: String, now: UInt64) {
        guard socket != nil else { return }
        tearDown(reason: reason, now: now)
    }

    /// Closes the link for good; commands waiting for replies fail with `.connectionLost`.
    func close() {
        tearDown(reason: "the link was closed", now: 0)
        state = .closed
    }

    /// Closes the link without calling anything back — not the replies still pending, not
    /// `onDown`: its owner is going away, and those handlers may refer to it.
    func abandon() {
        pending.removeAll()
        pendingHead = 0
        onDown = nil
        close()
    }

    // MARK: - LoopSource

    var watch: LoopWatch? {
        guard let socket else { return nil }
        switch state {
        case .connecting: return LoopWatch(fd: socket.fd, socket: connects, writable: true)
        case .signingIn, .ready:
            // A write that waits for TLS to read (the handshake) must not ask for writability, or a
            // level-triggered EPOLLOUT would wake the loop until the server answers.
            let wantsWrite = !output.isEmpty && tls?.writeWaitsForReadable != true
            return LoopWatch(fd: socket.fd, socket: connects, writable: wantsWrite || tls?.readWaitsForWritable == true)
        case .disconnected, .closed: return nil
        }
    }

    var nextDeadline: UInt64? {
        switch state {
        case .disconnected(let retryAt): retryAt
        case .connecting(let deadline): deadline
        case .signingIn, .ready: pendingHead < pending.count ? pending[pendingHead].deadline : nil
        case .closed: nil
        }
    }

    func ready(readable: Bool, writable: Bool, hangup: Bool, now: UInt64) {
        switch state {
        case .connecting:
            guard writable || hangup, let socket else { return }
            if let error = socket.connectResult() {
                return tearDown(reason: "cannot connect to \(address): \(error)", now: now)
            }
            signIn(now: now)
        case .signingIn, .ready:
            if readable || hangup || (writable && tls?.readWaitsForWritable == true) { read(now: now) }
            if writable || (readable && tls?.writeWaitsForReadable == true) { flush(now: now) }
        case .disconnected, .closed:
            return
        }
    }

    func tick(now: UInt64) {
        switch state {
        case .disconnected(let retryAt):
            if now >= retryAt { connect(now: now) }
        case .connecting(let deadline):
            if now >= deadline {
                tearDown(reason: "connecting to \(address) timed out", now: now)
            }
        case .signingIn, .ready:
            if pendingHead < pending.count, now >= pending[pendingHead].deadline {
                let timeout = RedisError.timedOut(
                    command: pending[pendingHead].label, milliseconds: Int(options.commandTimeout / 1_000_000))
                return tearDown(reason: timeout.description, now: now, failingFirstWith: timeout)
            }
            flush(now: now)
        case .closed:
            return
        }
    }

    // MARK: - Connecting

    private func connect(now: UInt64) {
        if let locate = options.locate {
            guard let located = locate() else {
                return tearDown(reason: "the master's address is not known yet (asking Sentinel)", now: now)
            }
            address = located
        }
        do throws(SystemError) {
            // getaddrinfo blocks for a name that is not in /etc/hosts; an IP literal never does.
            guard let remote = try ResolvedAddress.resolve(address).first else {
                throw SystemError(call: "resolve \(address.host)", errno: EHOSTUNREACH)
            }
            let (socket, connected) = try Socket.connecting(to: remote)
            self.socket = socket
            connects += 1
            if connected {
                signIn(now: now)
            } else {
                state = .connecting(deadline: now + options.connectTimeout)
            }
        } catch {
            tearDown(reason: "cannot connect to \(address): \(error)", now: now)
        }
    }

    /// Sends AUTH, SELECT and CLIENT SETNAME; the link is ready when all three succeed. With
    /// TLS the handshake runs inside the first writes and reads of these.
    private func signIn(now: UInt64) {
        state = .signingIn
        if let context = options.tls, let socket {
            do {
                tls = try TLSStream(client: context, fd: socket.fd, serverName: address.host)
            } catch {
                return tearDown(reason: "TLS to \(address): \(error)", now: now)
            }
        }
        var commands: [RedisCommand] = []
        if let password = options.url.password {
            var arguments = [password]
            if let user = options.url.user { arguments.insert(user, at: 0) }
            commands.append(RedisCommand("AUTH", arguments))
        }
        if options.url.database != 0 { commands.append(RedisCommand("SELECT", [String(options.url.database)])) }
        if let name = options.clientName { commands.append(RedisCommand("CLIENT", ["SETNAME", name], label: "CLIENT SETNAME")) }
        if options.requireMaster { commands.append(RedisCommand("ROLE", [])) }
        // Over TLS a link is ready only once the handshake is done, i.e. once something answered.
        if commands.isEmpty && tls != nil { commands.append(RedisCommand("PING", [])) }
        guard !commands.isEmpty else { return becomeReady() }
        var remaining = commands.count
        for command in commands {
            enqueue(command, now: now) { [weak self] result in
                guard let self, self.state == .signingIn else { return }
                switch result {
                case .success(let reply):
                    if command.label == "ROLE", let role = reply.elements?.first?.string, role != "master" {
                        return self.tearDown(reason: "\(self.address) is a \(role), not the master", now: now)
                    }
                    remaining -= 1
                    if remaining == 0 { self.becomeReady() }
                case .failure(let error):
                    self.tearDown(reason: "signing in failed: \(error)", now: now)
                }
            }
        }
        flush(now: now)
    }

    private func becomeReady() {
        state = .ready
        certificateRefused = false
        attempt = 0
        onReady?()
    }

    // MARK: - I/O

    private func enqueue(_ command: RedisCommand, now: UInt64, reply: @escaping ReplyHandler) {
        command.encode(into: &output)
        pending.append(Pending(label: command.label, deadline: now + options.commandTimeout, handler: reply))
    }

    private func flush(now: UInt64) {
        guard let socket, !output.isEmpty else { return }
        var written = 0
        writing: while written < output.count {
            let result = output[written...].withUnsafeBytes { bytes in
                Result { () throws(SystemError) in
                    if let tls { return try tls.write(bytes) }
                    return try socket.write(bytes)
                }
            }
            switch result {
            case .success(.processed(let count)): written += count
            case .success(.wouldBlock): break writing
            case .failure(let error): return tearDown(reason: "writing to Redis failed: \(failure(error))", now: now)
            }
        }
        output.removeFirst(written)
    }

    private func read(now: UInt64) {
        guard let socket else { return }
        while true {
            let result = readBuffer.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in
                    if let tls { return try tls.read(into: buffer) }
                    return try socket.read(into: buffer)
                }
            }
            switch result {
            case .failure(let error):
                return tearDown(reason: "reading from Redis failed: \(failure(error))", now: now)
            case .success(.wouldBlock):
                return
            case .success(.processed(0)):
                return tearDown(reason: "Redis closed the connection", now: now)
            case .success(.processed(let count)):
                parser.append(readBuffer[0..<count])
                guard deliverReplies(now: now) else { return }
                // TLS may hold decrypted bytes the socket no longer signals.
                if count < readBuffer.count && tls?.hasBufferedInput != true { return }
            }
        }
    }

    /// An I/O error, with the certificate's problem when TLS refused it.
    private func failure(_ error: SystemError) -> String {
        guard let problem = tls?.certificateProblem else { return "\(error)" }
        certificateRefused = true
        return "the certificate of \(address) is not trusted (\(problem)); give its CA with --redis-ca FILE"
    }

    /// Hands every complete reply to its handler; false when the link went down meanwhile.
    private func deliverReplies(now: UInt64) -> Bool {
        let socketBefore = socket?.fd
        while socket != nil, socket?.fd == socketBefore {
            let value: RESPValue
            do {
                guard let next = try parser.next() else { return true }
                value = next
            } catch {
                let label = pendingHead < pending.count ? pending[pendingHead].label : "no command"
                let failure = RedisError.badReply(command: label, reason: error.description)
                tearDown(reason: failure.description, now: now, failingFirstWith: failure)
                return false
            }
            if let pushHandler, Self.isPush(value) {
                pushHandler(value)
                continue
            }
            guard pendingHead < pending.count else {
                tearDown(reason: "Redis sent a reply to no command", now: now)
                return false
            }
            let answered = pending[pendingHead]
            pendingHead += 1
            if pendingHead == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingHead = 0
            }
            if case .error(let message) = value {
                answered.handler(.failure(.server(command: answered.label, message: message)))
            } else {
                answered.handler(.success(value))
            }
        }
        return false
    }

    private static func isPush(_ value: RESPValue) -> Bool {
        guard let kind = value.elements?.first?.string else { return false }
        return kind == "message" || kind == "pmessage"
    }

    /// Closes the socket, fails every command waiting for a reply (the first with `firstFailure`
    /// when given, the others as lost) and schedules a reconnect.
    private func tearDown(reason: String, now: UInt64, failingFirstWith firstFailure: RedisError? = nil) {
        let wasReady = state == .ready
        tls = nil
        if var socket {
            socket.close()
            self.socket = nil
        }
        lastError = reason
        output.removeAll()
        parser = RESPParser(limits: options.limits)
        let failed = pending[pendingHead...]
        pending.removeAll()
        pendingHead = 0
        if state != .closed {
            let delay = options.backoff.delay(attempt: attempt, random: random())
            attempt += 1
            state = .disconnected(retryAt: now + UInt64(delay.nanoseconds))
        }
        for (index, entry) in zip(failed.indices, failed) {
            let failure = index == failed.startIndex ? firstFailure : nil
            entry.handler(.failure(failure ?? .connectionLost(command: entry.label, reason: reason)))
        }
        if wasReady { onDown?(reason) }
    }
}

@available(*, unavailable)
extension RedisConnection: Sendable {}
