import CLinux
import Glibc

/// One epoll loop on its own thread (STYLE §7). It owns its epoll fd, eventfd, timers, read
/// buffer, listeners and connections, and touches nothing else.
///
/// A tick: wait → dispatch readiness → drain the mailbox → fire timers → flush pending output
/// → reap closed connections. Output is written at the end of the tick, so a burst of messages
/// costs one `writev` per connection; EPOLLOUT is armed only for what the socket did not take.
/// Invariants: every connection in `connections` has an open socket registered under its
/// token; a reaped connection is gone from `connections` before the next tick.
final class EventLoop {
    static let wakeToken: UInt64 = 0
    static let firstConnectionToken: UInt64 = 16

    let index: Int
    let services: HubServices
    let config: HubConfig
    let metrics: Metrics
    let admin: AdminAPI
    /// Who on this loop is subscribed to which screen.
    var subscriptions: Subscriptions
    private let epoll: Epoll
    private let wakeFD: Int32
    private let mailbox: Mailbox
    private var listeners: [(listener: Listener, kind: ListenerKind)]
    private var connections: [UInt64: Connection] = [:]
    private var nextToken = EventLoop.firstConnectionToken
    private var timers = Timers<UInt64>()
    /// Sync deliveries spread over a window (DESIGN §5 `spread`), due at their deadline.
    private var scheduledSyncs = Timers<(token: UInt64, sync: Sync)>()
    private var pendingFlush: [Connection] = []
    private var pendingReap: [Connection] = []
    private var shutdownDeadline: UInt64?
    /// Set when accept failed for lack of descriptors: the listeners leave epoll until then,
    /// since a level-triggered listener with a pending connection would wake the loop forever.
    private var acceptPausedUntil: UInt64?
    /// The time of the current tick (monotonic nanoseconds), read once per wake-up.
    private(set) var now: UInt64
    /// One read buffer for every connection of the loop; a handler must not keep slices of it.
    let readBuffer: UnsafeMutableRawBufferPointer

    init(index: Int, services: HubServices, mailbox: Mailbox, wakeFD: Int32, listeners: [(Listener, ListenerKind)])
        throws(SystemError)
    {
        self.index = index
        self.services = services
        config = services.config
        metrics = services.metrics
        admin = AdminAPI(services: services)
        subscriptions = Subscriptions(counts: services.subscriberCounts)
        self.mailbox = mailbox
        self.wakeFD = wakeFD
        self.listeners = listeners.map { (listener: $0.0, kind: $0.1) }
        epoll = try Epoll()
        now = MonotonicClock.now()
        readBuffer = .allocate(byteCount: 256 << 10, alignment: 16)
        try epoll.add(fd: wakeFD, token: Self.wakeToken)
        for (i, entry) in self.listeners.enumerated() {
            try epoll.add(fd: entry.listener.socket.fd, token: UInt64(i + 1))
        }
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
            deliverDueSyncs()
            resumeAcceptingIfDue()
            flushPending()
            reapPending()
            if let deadline = shutdownDeadline, connections.isEmpty || now >= deadline { break }
        }
        for connection in connections.values { connection.requestClose() }
        reapPending()
    }

    private func waitTimeoutMilliseconds() -> Int32 {
        if !pendingFlush.isEmpty || !pendingReap.isEmpty { return 0 }
        var deadline = timers.nextDeadline
        if let due = scheduledSyncs.nextDeadline { deadline = min(deadline ?? due, due) }
        if let acceptPausedUntil { deadline = min(deadline ?? acceptPausedUntil, acceptPausedUntil) }
        if let shutdownDeadline { deadline = min(deadline ?? shutdownDeadline, shutdownDeadline) }
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
        case 1..<Self.firstConnectionToken:
            acceptAll(listenerIndex: Int(event.token) - 1)
        default:
            guard let connection = connections[event.token], !connection.isCloseRequested else { return }
            if event.isReadable || event.isHangup { connection.readable() }
            if event.isWritable && !connection.isCloseRequested { connection.flush() }
            if event.isHangup && !event.isReadable { connection.requestClose() }
            schedule(connection)
        }
    }

    private func acceptAll(listenerIndex: Int) {
        guard listenerIndex < listeners.count, shutdownDeadline == nil else { return }
        let (listener, kind) = listeners[listenerIndex]
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
            if metrics.openConnections.load(ordering: .relaxed) >= config.maxConnections {
                owned.close()
                continue
            }
            owned.setNoDelay()
            let token = nextToken
            nextToken += 1
            do {
                try epoll.add(fd: owned.fd, token: token)
            } catch {
                Log.warning("epoll registration failed", [("error", "\(error)")])
                owned.close()
                continue
            }
            let connection = Connection(token: token, socket: owned, kind: kind, loop: self)
            connections[token] = connection
            metrics.openConnections.add(1, ordering: .relaxed)
            metrics.acceptedTotal.add(1, ordering: .relaxed)
            schedule(connection)
        }
    }

    private func pauseAccepting() {
        guard acceptPausedUntil == nil else { return }
        acceptPausedUntil = now + 100_000_000
        for entry in listeners { epoll.remove(fd: entry.listener.socket.fd) }
    }

    private func resumeAcceptingIfDue() {
        guard let until = acceptPausedUntil, now >= until else { return }
        acceptPausedUntil = nil
        for (i, entry) in listeners.enumerated() {
            do {
                try epoll.add(fd: entry.listener.socket.fd, token: UInt64(i + 1))
            } catch {
                Log.error("cannot resume accepting", [("error", "\(error)")])
            }
        }
    }

    private func perform(_ command: LoopCommand) {
        switch command {
        case .shutdown(let deadline):
            shutdownDeadline = deadline
            acceptPausedUntil = nil
            for index in listeners.indices {
                epoll.remove(fd: listeners[index].listener.socket.fd)
                listeners[index].listener.close()
            }
            listeners.removeAll()
            for connection in connections.values {
                connection.close(.goingAway, reason: "hub shutting down")
                schedule(connection)
            }
        case .run(let body):
            body()
        case .screenPublished(let version):
            fanOut(version)
        case .deliverSync(let sync, let deliveries):
            for (token, due) in deliveries {
                if due <= now {
                    connections[token]?.deliver(sync)
                } else {
                    scheduledSyncs.schedule((token, sync), at: due)
                }
            }
        case .experimentsChanged(let screens):
            experimentsChanged(screens)
        case .screenDeleted(let name):
            for connection in subscriptions.removeScreen(name) { connection.screenDeleted(name) }
        }
    }

    /// Brings every subscriber of `version.name` on this loop to `version` (under the experiment
    /// set in force). The frame for a run of subscribers with the same starting point and
    /// rendition is looked up once; the frames themselves are shared by all loops.
    private func fanOut(_ version: ScreenVersion) {
        guard let subscribers = subscriptions.subscribers(of: version.name) else { return }
        let set = services.experiments.current
        var memo: (from: ScreenVersion, fromTarget: RenderTarget, target: RenderTarget, frame: [UInt8]?)?
        var sent = 0
        for connection in subscribers {
            guard let index = connection.subscriptionIndex(version.name) else { continue }
            let had = connection.subscribed[index]
            guard had.version.version < version.version else { continue }
            if connection.isCongested {
                // DESIGN §9: above the high watermark the latest state supersedes; one catch-up
                // patch goes out from what the client has once its buffer drains.
                connection.needsCatchUp = true
                metrics.coalesced.add(1, ordering: .relaxed)
                continue
            }
            let (target, view) = connection.renderTarget(for: version.name, in: set)
            let frame: [UInt8]?
            if let memo, memo.from === had.version, memo.fromTarget == had.target, memo.target == target {
                frame = memo.frame
            } else {
                frame = Fanout.update(from: had.version, oldTarget: had.target, to: version, newTarget: target)
                memo = (had.version, had.target, target, frame)
            }
            subscriptions.update(connection, at: index, version, target)
            connection.noteExposures(view, screen: version.name, version: version.version)
            if let frame {
                connection.queueShared(frame)
                sent += 1
            }
        }
        metrics.messagesOut.add(sent, ordering: .relaxed)
    }

    /// Experiments changed: re-render the affected screens for their subscribers here and send
    /// patches to exactly those whose rendition changed.
    private func experimentsChanged(_ screens: [String]) {
        let set = services.experiments.current
        for screen in screens {
            guard let subscribers = subscriptions.subscribers(of: screen),
                let current = services.screens.current(screen)
            else { continue }
            for connection in subscribers {
                guard let index = connection.subscriptionIndex(screen) else { continue }
                let had = connection.subscribed[index]
                let (target, view) = connection.renderTarget(for: screen, in: set)
                guard target != had.target || had.version !== current else { continue }
                subscriptions.update(connection, at: index, current, target)
                connection.noteExposures(view, screen: screen, version: current.version)
                if let frame = Fanout.update(from: had.version, oldTarget: had.target, to: current, newTarget: target) {
                    connection.queueShared(frame)
                    metrics.messagesOut.add(1, ordering: .relaxed)
                }
            }
        }
    }

    // MARK: - Services for connections

    /// Queues `connection` for a write at the end of this tick.
    func flushSoon(_ connection: Connection) {
        guard !connection.isFlushPending else { return }
        connection.isFlushPending = true
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
        let interest = Connection.Interest(readable: !connection.isReadPaused, writable: writable)
        guard interest != connection.registeredInterest else { return }
        do {
            try epoll.modify(
                fd: connection.socket.fd, token: connection.token, readable: interest.readable,
                writable: interest.writable)
            connection.registeredInterest = interest
        } catch {
            connection.requestClose()
        }
    }

    /// Makes sure a timer is set for the connection's next deadline.
    func schedule(_ connection: Connection) {
        guard !connection.isCloseRequested, let due = connection.nextDeadline else { return }
        // Never due before the next tick: a deadline that is already past would otherwise be
        // popped again in the same `fireTimers` pass, forever, if its owner has nothing to do.
        let deadline = max(due, now + 1_000_000)
        if let scheduled = connection.scheduledDeadline, scheduled <= deadline { return }
        connection.scheduledDeadline = deadline
        timers.schedule(connection.token, at: deadline)
    }

    private func fireTimers() {
        while let entry = timers.popDue(now: now) {
            guard let connection = connections[entry.payload], connection.scheduledDeadline == entry.deadline else {
                continue
            }
            connection.scheduledDeadline = nil
            connection.timerFired(now: now)
            schedule(connection)
        }
    }

    private func deliverDueSyncs() {
        while let entry = scheduledSyncs.popDue(now: now) {
            connections[entry.payload.token]?.deliver(entry.payload.sync)
        }
    }

    private func flushPending() {
        var index = 0
        // A flush may queue more work (e.g. resume reading); iterate by index over a growing list.
        while index < pendingFlush.count {
            let connection = pendingFlush[index]
            connection.isFlushPending = false
            connection.flush()
            schedule(connection)
            index += 1
        }
        pendingFlush.removeAll(keepingCapacity: true)
    }

    private func reapPending() {
        for connection in pendingReap {
            guard connections.removeValue(forKey: connection.token) != nil else { continue }
            epoll.remove(fd: connection.socket.fd)
            connection.unsubscribeAll()
            connection.reap()
            metrics.openConnections.subtract(1, ordering: .relaxed)
        }
        pendingReap.removeAll(keepingCapacity: true)
    }
}

@available(*, unavailable)
extension EventLoop: Sendable {}

@available(*, unavailable)
extension Connection: Sendable {}
