import CLinux
import Glibc

/// One epoll loop on its own thread (STYLE §7). It owns its epoll fd, eventfd, timers, read
/// buffer, listeners and connections, and touches nothing else. A client loop (`ClientLoop`)
/// holds `WebSocketConnection`s and serves their sessions through its `Shard`; the control
/// plane's loop (`ControlLoop`) holds `AdminConnection`s and serves the admin API through the
/// `ControlPlane` (DESIGN §9 "Who owns what"). The loop drives every connection through
/// `LoopConnection`; generic over the kind, it holds each as a plain reference to its class (no
/// existential: a slot in its tables stays one word, and calls are direct once specialized).
///
/// A tick: wait → dispatch readiness → drain the mailbox → fire timers → (control plane: commit
/// the tick's mutations with one fsync) → flush pending output → reap closed connections. Output
/// is written at the end of the tick, so a burst of messages costs one `writev` per connection;
/// EPOLLOUT is armed only for what the socket did not take.
/// Invariants: every connection in `connections` has an open socket registered under its
/// token; a reaped connection is gone from `connections` (and from its shard's indexes) before
/// the next tick; a client loop has a `shard` and no `controlPlane`, the control plane's loop the
/// reverse.
final class EventLoop<Connection: LoopConnection> {
    static var wakeToken: UInt64 { 0 }
    /// Listeners take tokens 1..<8, sources (`LoopSource`) 8..<64, connections the rest. The
    /// control plane's sources: the log's links, the push links, the outbound HTTP client (17).
    static var firstSourceToken: UInt64 { 8 }
    static var firstConnectionToken: UInt64 { 64 }
    /// Connections beyond `maxConnections` accepted to be answered (a 503, an admin request).
    static var handshakeHeadroom: Int { 1024 }

    let index: Int
    /// Read by connections and the shard as they go, so a reload applies to the next use.
    private(set) var config: HubConfig
    /// How often clients that asked for heartbeats get one (ns): the ping interval, or the
    /// shortest it has been since start. A reload may shorten it at once, never lengthen it: a
    /// client was told `heartbeat_s` in its welcome and takes the link for dead after two missed
    /// heartbeats (docs/protocol.md "Heartbeats").
    private(set) var heartbeatInterval: UInt64
    let metrics: Metrics
    /// This loop's own figures (nil when the hub's metrics have no per-loop entries).
    private let loopMetrics: LoopMetrics?
    /// This loop's share of the clients (client loops).
    private(set) var shard: Shard?
    /// The hub's state and admin API (the control plane's loop).
    let controlPlane: ControlPlane?
    private let epoll: Epoll
    private let wakeFD: Int32
    private let mailbox: Mailbox
    private var listeners: [Listener]
    /// Descriptors besides connections this loop drives (the control plane's Redis links), with
    /// what each is registered for now.
    private let sources: [LoopSource]
    private var sourceWatches: [LoopWatch?]
    private var connections = TokenOrderedSet<Connection>()
    private var nextToken = EventLoop.firstConnectionToken
    private var timers = DeadlineHeap<Connection>()
    private var pendingFlush: [Connection] = []
    private var pendingReap: [Connection] = []
    private var shutdownDeadline: UInt64?
    /// Set when accept failed for lack of descriptors: the listeners leave epoll until then,
    /// since a level-triggered listener with a pending connection would wake the loop forever.
    private var acceptPausedUntil: UInt64?
    /// The time of the current tick (monotonic nanoseconds), read once per wake-up.
    private(set) var now: UInt64
    /// Client connections are refused at this descriptor number or above (the descriptor limit
    /// less `SystemInfo.descriptorReserve`).
    private let clientDescriptorCeiling = SystemInfo.descriptorLimit() - SystemInfo.descriptorReserve
    /// Bytes written this tick, added to the shared counter once per tick (not per write).
    var bytesWritten = 0
    /// Messages sent compressed this tick, likewise.
    var compressedMessagesOut = 0
    /// permessage-deflate for this loop's connections (one inflater, deflaters, shared frames).
    let compression: FrameCompression
    /// One read buffer for every connection of the loop; a handler must not keep slices of it.
    let readBuffer: UnsafeMutableRawBufferPointer

    /// Connections per client address, hub-wide (`--max-connections-per-ip`).
    let addresses: AddressLedger
    /// The address each admitted connection of this loop is counted under, to release at reap.
    private var countedAddresses: [UInt64: UInt32] = [:]

    /// A loop accepting `Connection`s on `listeners`; the control plane's when `controlPlane` is set.
    init(
        index: Int, controlPlane: ControlPlane?, config: HubConfig, metrics: Metrics, addresses: AddressLedger,
        mailbox: Mailbox, wakeFD: Int32, listeners: [Listener]
    ) throws(SystemError) {
        self.index = index
        self.config = config
        heartbeatInterval = config.pingInterval.nanoseconds
        self.metrics = metrics
        loopMetrics = metrics.loops.indices.contains(index) ? metrics.loops[index] : nil
        self.addresses = addresses
        self.mailbox = mailbox
        self.wakeFD = wakeFD
        self.listeners = listeners
        self.controlPlane = controlPlane
        sources = controlPlane?.loopSources ?? []
        precondition(sources.count <= Int(Self.firstConnectionToken - Self.firstSourceToken), "source tokens run out")
        sourceWatches = Array(repeating: nil, count: sources.count)
        epoll = try Epoll()
        now = MonotonicClock.now()
        readBuffer = .allocate(byteCount: 256 << 10, alignment: 16)
        compression = FrameCompression(metrics: metrics)
        try epoll.add(fd: wakeFD, token: Self.wakeToken)
        for (i, listener) in self.listeners.enumerated() {
            try epoll.add(fd: listener.socket.fd, token: UInt64(i + 1))
        }
        for index in sources.indices { updateWatch(ofSource: index) }
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Runs ticks until a shutdown has drained.
    func run() {
        while true {
            let timeout = waitTimeoutMilliseconds()
            do {
                // The tick's time is read right after the wait, before any event is handled:
                // deadlines and activity stamps set while dispatching use it.
                try epoll.wait(timeoutMilliseconds: timeout, woke: { now = MonotonicClock.now() }) { event in
                    dispatch(event)
                }
            } catch {
                Log.error("event loop wait failed", [("loop", index), ("error", "\(error)")])
            }
            for command in mailbox.drain() { perform(command) }
            fireTimers()
            shard?.tickEnded(now: now)
            controlPlane?.tickEnded(now: now)
            for (index, source) in sources.enumerated() {
                source.tick(now: now)
                updateWatch(ofSource: index)
            }
            resumeAcceptingIfDue()
            flushPending()
            if bytesWritten > 0 {
                metrics.bytesOut.add(bytesWritten, ordering: .relaxed)
                bytesWritten = 0
            }
            if compressedMessagesOut > 0 {
                metrics.compressedMessagesOut.add(compressedMessagesOut, ordering: .relaxed)
                compressedMessagesOut = 0
            }
            let finished = MonotonicClock.now()
            loopMetrics?.lag.note(finished - now, now: finished)
            reapPending()
            if let deadline = shutdownDeadline, hasDrained || (controlPlane == nil && now >= deadline) { break }
        }
        for connection in connections.inOrder() { connection.requestClose() }
        reapPending()
        closeListeners()
        controlPlane?.stopped()
    }

    /// Whether a shutdown has finished: a client loop's once its clients are gone (or its drain
    /// deadline passed), the control plane's once every client loop has stopped. The control
    /// plane keeps its admin listener and connections until then, so that `/readyz` answers 503
    /// (and `/metrics` is scraped) throughout the drain, and what the client loops report while
    /// they drain is still kept.
    private var hasDrained: Bool {
        if let controlPlane { return controlPlane.clientLoopsRunning == 0 }
        return connections.isEmpty
    }

    private func closeListeners() {
        for index in listeners.indices {
            epoll.remove(fd: listeners[index].socket.fd)
            listeners[index].close()
        }
        listeners.removeAll()
    }

    private func waitTimeoutMilliseconds() -> Int32 {
        if !pendingFlush.isEmpty || !pendingReap.isEmpty { return 0 }
        var deadline = timers.nextDeadline
        if let due = shard?.nextSyncDeadline { deadline = min(deadline ?? due, due) }
        if let due = controlPlane?.nextDeadline { deadline = min(deadline ?? due, due) }
        for source in sources {
            if let due = source.nextDeadline { deadline = min(deadline ?? due, due) }
        }
        if let acceptPausedUntil { deadline = min(deadline ?? acceptPausedUntil, acceptPausedUntil) }
        if let shutdownDeadline, controlPlane == nil { deadline = min(deadline ?? shutdownDeadline, shutdownDeadline) }
        guard let deadline else { return -1 }
        let current = MonotonicClock.now()
        if deadline <= current { return 0 }
        return Int32(min((deadline - current + 999_999) / 1_000_000, 60_000))
    }

    private func dispatch(_ event: Epoll.Event) {
        switch event.token {
        case Self.wakeToken:
            var value: UInt64 = 0
            _ = Glibc.read(wakeFD, &value, 8)
        case 1..<Self.firstSourceToken:
            acceptAll(listenerIndex: Int(event.token) - 1)
        case Self.firstSourceToken..<Self.firstConnectionToken:
            let index = Int(event.token - Self.firstSourceToken)
            guard index < sources.count else { return }
            sources[index].ready(
                readable: event.isReadable, writable: event.isWritable, hangup: event.isHangup, now: now)
            updateWatch(ofSource: index)
        default:
            guard let connection = connections[event.token], !connection.isCloseRequested else { return }
            if event.isReadable || event.isHangup { connection.readable() }
            if event.isWritable && !connection.isCloseRequested { connection.flush() }
            if event.isHangup && !event.isReadable { connection.requestClose() }
            schedule(connection)
        }
    }

    private func acceptAll(listenerIndex: Int) {
        // The admin listener accepts while the hub drains (`hasDrained`); client listeners are gone.
        guard listenerIndex < listeners.count, shutdownDeadline == nil || controlPlane != nil else { return }
        let listener = listeners[listenerIndex]
        let kind = Connection.listenerKind
        for _ in 0..<64 {
            let socket: Socket
            do {
                switch try listener.accept() {
                case .wouldBlock: return
                case .processed(let accepted): socket = accepted
                }
            } catch {
                // EMFILE, ENFILE, ENOBUFS: stop accepting for a moment instead of spinning.
                Log.warning("accept failed; pausing accepts for 100 ms", [("error", "\(error)")])
                pauseAccepting()
                return
            }
            var owned = socket
            // Clients may not take the last descriptors: they are kept for the admin listener, so
            // operators reach /healthz and the admin API when clients have taken every other one
            // (DESIGN §9). Descriptors are numbered lowest first, so the number says how many are left.
            // `maxConnections` is enforced at the upgrade (a 503 says why); here only a bound with
            // room for the requests being answered, so a flood of sockets that never upgrade
            // cannot take the hub past it either.
            if metrics.openConnections.load(ordering: .relaxed) >= config.maxConnections + Self.handshakeHeadroom
                || (kind == .client && Int(owned.fd) >= clientDescriptorCeiling)
            {
                owned.close()
                metrics.handshakesRejected.add(1, ordering: .relaxed)
                continue
            }
            var tls: TLSStream?
            if let context = kind == .client ? config.tls : config.adminTLS {
                do {
                    tls = try TLSStream(context: context, fd: owned.fd)
                } catch {
                    Log.warning("TLS setup failed", [("error", "\(error)")])
                    owned.close()
                    continue
                }
            }
            let token = nextToken
            nextToken += 1
            do {
                try epoll.add(fd: owned.fd, token: token)
            } catch {
                Log.warning("epoll registration failed", [("error", "\(error)")])
                owned.close()
                continue
            }
            let connection = Connection(token: token, socket: owned, loop: self, tls: tls)
            connections.insert(connection)
            metrics.openConnections.add(1, ordering: .relaxed)
            loopMetrics?.connections.add(1, ordering: .relaxed)
            metrics.acceptedTotal.add(1, ordering: .relaxed)
            // A deferred accept has the first bytes waiting: read them now, not after another wait.
            if listener.defersAccept { connection.readable() }
            schedule(connection)
        }
    }

    /// Registers what source `index` wants watched now, if that changed.
    private func updateWatch(ofSource index: Int) {
        let wanted = sources[index].watch
        let current = sourceWatches[index]
        guard wanted != current else { return }
        let token = Self.firstSourceToken + UInt64(index)
        do throws(SystemError) {
            // A source changes sockets only after closing the old one, which left epoll with its
            // close; removing its number now could unregister a connection that reuses it.
            if let wanted {
                if wanted.isSameSocket(as: current) {
                    try epoll.modify(fd: wanted.fd, token: token, readable: true, writable: wanted.writable)
                } else {
                    try epoll.add(fd: wanted.fd, token: token, readable: true, writable: wanted.writable)
                }
            }
            sourceWatches[index] = wanted
        } catch {
            // Only a bug (a closed descriptor) gets here; the source's own timeouts recover it.
            Log.error("cannot watch a loop source", [("error", "\(error)")])
            sourceWatches[index] = nil
        }
    }

    private func pauseAccepting() {
        guard acceptPausedUntil == nil else { return }
        acceptPausedUntil = now + 100_000_000
        for listener in listeners { epoll.remove(fd: listener.socket.fd) }
    }

    private func resumeAcceptingIfDue() {
        guard let until = acceptPausedUntil, now >= until else { return }
        acceptPausedUntil = nil
        for (i, listener) in listeners.enumerated() {
            do {
                try epoll.add(fd: listener.socket.fd, token: UInt64(i + 1))
            } catch {
                Log.error("cannot resume accepting", [("error", "\(error)")])
            }
        }
    }

    private func perform(_ command: LoopCommand) {
        switch command {
        case .shutdown(let deadline):
            shutdownDeadline = deadline
            // The control plane's loop goes on serving the admin listener until `hasDrained`.
            guard controlPlane == nil else { return }
            acceptPausedUntil = nil
            closeListeners()
            for connection in connections.inOrder() {
                connection.shutDown()
                schedule(connection)
            }
        case .change(let change, let reply):
            shard?.apply(change, reply: reply)
        case .query(let query, let reply):
            shard?.answer(query, reply: reply)
        case .event(let event):
            controlPlane?.received(event)
        case .reconfigure(let config):
            self.config = config
            heartbeatInterval = min(heartbeatInterval, config.pingInterval.nanoseconds)
            shard?.reconfigure(config)
        case .keysRefreshed:
            shard?.keysRefreshed()
        }
    }

    // MARK: - Services for connections and the shard

    /// The connection with this token on this loop, if it is still open.
    func connection(_ token: UInt64) -> Connection? {
        guard let connection = connections[token], !connection.isCloseRequested else { return nil }
        return connection
    }

    /// Calls `body` with every open connection of this loop.
    func forEachConnection(_ body: (Connection) -> Void) {
        for connection in connections.inOrder() where !connection.isCloseRequested { body(connection) }
    }

    /// Counts `connection` against its address's limit; false when the address is at it.
    func admitAddress(of connection: Connection) -> Bool {
        let limit = config.maxConnectionsPerAddress
        guard limit > 0, let address = connection.stream.socket.peerIPv4 else { return true }
        guard addresses.admit(address, limit: limit) else { return false }
        countedAddresses[connection.token] = address
        return true
    }

    /// Queues `connection` for a write at the end of this tick.
    func flushSoon(_ connection: Connection) {
        guard !connection.stream.isFlushPending else { return }
        connection.stream.isFlushPending = true
        pendingFlush.append(connection)
    }

    /// Queues `connection` to be closed at the end of this tick.
    func reapSoon(_ connection: Connection) {
        pendingReap.append(connection)
    }

    /// Sets what epoll reports for `connection`: readable unless it paused reading, writable
    /// when asked. Skips the system call when nothing changed (the common case per flush).
    func updateInterest(_ connection: Connection, writable: Bool) {
        guard !connection.isCloseRequested else { return }
        let interest = ByteStream.Interest(readable: !connection.stream.isReadPaused, writable: writable)
        guard interest != connection.stream.registeredInterest else { return }
        do {
            try epoll.modify(
                fd: connection.stream.socket.fd, token: connection.token, readable: interest.readable,
                writable: interest.writable)
            connection.stream.registeredInterest = interest
        } catch {
            connection.requestClose()
        }
    }

    /// Makes sure a timer is set for the connection's next deadline.
    func schedule(_ connection: Connection) {
        guard !connection.isCloseRequested, let due = connection.nextDeadline else { return }
        // Never due before the next tick: a deadline that is already past would otherwise be
        // popped again in the same `fireTimers` pass, forever, if its owner has nothing to do.
        timers.schedule(connection, at: max(due, now + 1_000_000))
    }

    private func fireTimers() {
        while let connection = timers.popDue(now: now) {
            connection.timerFired(now: now)
            schedule(connection)
        }
    }

    private func flushPending() {
        var index = 0
        // A flush may queue more work (e.g. resume reading); iterate by index over a growing list.
        while index < pendingFlush.count {
            let connection = pendingFlush[index]
            connection.stream.isFlushPending = false
            connection.flush()
            schedule(connection)
            index += 1
        }
        pendingFlush.removeAll(keepingCapacity: true)
    }

    private func reapPending() {
        for connection in pendingReap {
            guard connections.remove(token: connection.token) != nil else { continue }
            epoll.remove(fd: connection.stream.socket.fd)
            if let address = countedAddresses.removeValue(forKey: connection.token) { addresses.release(address) }
            timers.remove(connection)
            connection.reap()  // a client connection's session ends with it (`Shard.sessionEnded`)
            metrics.openConnections.subtract(1, ordering: .relaxed)
            loopMetrics?.connections.subtract(1, ordering: .relaxed)
        }
        pendingReap.removeAll(keepingCapacity: true)
    }
}

/// A client loop: `WebSocketConnection`s and the `Shard` that drives their sessions.
typealias ClientLoop = EventLoop<WebSocketConnection>
/// The control plane's loop: `AdminConnection`s and the `ControlPlane`.
typealias ControlLoop = EventLoop<AdminConnection>

extension EventLoop where Connection == WebSocketConnection {
    /// A client loop: its shard starts from `view` and reports to the control plane's mailbox.
    convenience init(
        index: Int, view: HubView, tokens: JWTVerifier, epoch: String, control: Mailbox, config: HubConfig,
        metrics: Metrics, addresses: AddressLedger, mailbox: Mailbox, wakeFD: Int32, listener: Listener
    ) throws(SystemError) {
        try self.init(
            index: index, controlPlane: nil, config: config, metrics: metrics, addresses: addresses, mailbox: mailbox,
            wakeFD: wakeFD, listeners: [listener])
        shard = Shard(
            loop: self, view: view, config: config, tokens: tokens, epoch: epoch, control: control, metrics: metrics)
    }
}

@available(*, unavailable)
extension EventLoop: Sendable {}
