/// Work besides client connections that a loop drives: one descriptor it watches (which may
/// change, e.g. when a link reconnects) and one deadline (the Redis links of the control plane).
/// The loop calls `ready` on readiness and `tick` at the end of every tick (timers, output), and
/// after each call registers `watch` with epoll again if it changed.
///
/// Invariant: a source is driven by one loop only, on that loop's thread.
protocol LoopSource: AnyObject {
    /// The descriptor to watch now and whether for writing too (nil: none, e.g. between
    /// reconnect attempts).
    var watch: LoopWatch? { get }
    /// When `tick` must run even without readiness (nil: not before the next readiness).
    var nextDeadline: UInt64? { get }
    func ready(readable: Bool, writable: Bool, hangup: Bool, now: UInt64)
    /// Fires what is due at `now` and writes pending output.
    func tick(now: UInt64)
}

/// What a `LoopSource` wants epoll to report. `socket` tells sockets apart that reuse one
/// descriptor number (a reconnect): the closed one left epoll with its close, the new one joins.
struct LoopWatch: Equatable {
    var fd: Int32
    var socket: UInt64
    var writable: Bool

    func isSameSocket(as other: LoopWatch?) -> Bool { other?.fd == fd && other?.socket == socket }
}
