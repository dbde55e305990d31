/// Work posted to a loop from another thread: the only traffic between threads (DESIGN §9).
enum LoopCommand: Sendable {
    /// Stop accepting, close every client with 1001, and exit once all are gone or `deadline`
    /// (monotonic nanoseconds) passes.
    case shutdown(deadline: UInt64)
    /// To a client loop: apply a durable change of hub state (in the order they are posted) and,
    /// with `reply`, answer the control plane with what it did there.
    case change(HubChange, reply: GatherID?)
    /// To a client loop: count something about its connections for the control plane.
    case query(LoopQuery, reply: GatherID)
    /// To the control plane, from a client loop.
    case event(LoopEvent)
    /// To a client loop: run with this config from now on (a SIGHUP reload; `ConfigReload`).
    case reconfigure(HubConfig)
    /// To a client loop: a JWKS fetch ended, or none will run now (DESIGN §18); the key set is
    /// the `JWTKeyStore`'s, read as it is. Hellos parked for an unknown kid are verified again.
    case keysRefreshed
}

/// A loop's inbox: commands in the order they were posted. Its lock is taken once per post and
/// once per tick, never per message.
///
/// Invariant: `wakeupPending` is true from the first post after a drain until the next drain,
/// so a burst of posts costs one eventfd write.
final class Mailbox: Sendable {
    private struct Pending {
        var commands: [LoopCommand] = []
        var wakeupPending = false
    }

    private let pending = PthreadMutex(Pending())  // guarded by itself
    private let wake: @Sendable () -> Void  // writes the owning loop's eventfd

    init(wake: @escaping @Sendable () -> Void) { self.wake = wake }

    func post(_ command: LoopCommand) {
        let mustWake = pending.withLock { p in
            p.commands.append(command)
            defer { p.wakeupPending = true }
            return !p.wakeupPending
        }
        if mustWake { wake() }
    }

    /// Takes every posted command; called by the owning loop only.
    func drain() -> [LoopCommand] {
        pending.withLock { p in
            p.wakeupPending = false
            defer { p.commands.removeAll() }
            return p.commands
        }
    }
}
