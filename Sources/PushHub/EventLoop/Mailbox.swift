import Synchronization

/// Work posted to a loop from another thread.
public enum LoopCommand: Sendable {
    /// Stop accepting, close every client with 1001, and exit once all are gone or `deadline`
    /// (monotonic nanoseconds) passes.
    case shutdown(deadline: UInt64)
    /// Run `body` on the loop's thread (admin scatter-gather, tests).
    case run(@Sendable () -> Void)
    /// A screen has a new version: bring this loop's subscribers to it.
    case screenPublished(ScreenVersion)
    /// Deliver `sync` to these connections of the loop, each at its due time (monotonic ns).
    case deliverSync(Sync, [(token: UInt64, due: UInt64)])
    /// Experiments touching these screens changed: re-render them for this loop's subscribers.
    case experimentsChanged([String])
    /// A screen was deleted: tell this loop's subscribers it is `gone`.
    case screenDeleted(String)
}

/// The only lock in PushHub: taken once per post and once per tick, never per message.
///
/// Invariant: `wakeupPending` is true from the first post after a drain until the next drain,
/// so a burst of posts costs one eventfd write.
public final class Mailbox: Sendable {
    private struct Pending {
        var commands: [LoopCommand] = []
        var wakeupPending = false
    }

    private let pending = Mutex(Pending())  // guarded by itself
    private let wake: @Sendable () -> Void  // writes the owning loop's eventfd

    init(wake: @escaping @Sendable () -> Void) { self.wake = wake }

    public func post(_ command: LoopCommand) {
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
