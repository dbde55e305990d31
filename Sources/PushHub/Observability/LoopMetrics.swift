import Synchronization

/// One event loop's own figures, exported with its index and role as labels
/// (`pushhub_loop_connections{loop="0",role="client"}`): how connections spread over the loops
/// and which loop is late, which the hub-wide gauges cannot tell.
///
/// Invariant: written by its loop only (relaxed atomics, read by the metrics exposition);
/// `connections` counts the loop's open connections and returns to 0 when they are gone.
public final class LoopMetrics: Sendable {
    public let index: Int
    /// `client` or `control` (the control plane's loop, which holds the admin connections).
    public let role: String
    public let connections = Atomic<Int>(0)
    let lag = LagWindow()

    init(index: Int, role: String) {
        self.index = index
        self.role = role
    }
}
