/// Reconnect delays with exponential backoff and full jitter: attempt `n` (0-based, counted
/// since the last welcome) waits a random time in 0..min(cap, initial × 2ⁿ). Full jitter spreads
/// a fleet that lost its hub at the same instant over the whole window instead of in waves.
public struct Backoff: Sendable, Equatable {
    public var initial: Duration
    public var cap: Duration

    public init(initial: Duration = .milliseconds(500), cap: Duration = .seconds(30)) {
        self.initial = initial
        self.cap = cap
    }

    /// The ceiling of attempt `attempt`'s window.
    public func ceiling(attempt: Int) -> Duration {
        let doublings = min(attempt, 30)
        let grown = initial * (1 << doublings)
        return grown < cap ? grown : cap
    }

    /// The delay of attempt `attempt` for a uniform `random` in [0, 1).
    public func delay(attempt: Int, random: Double) -> Duration { ceiling(attempt: attempt) * random }
}
