/// When to reconnect after a drop (docs/clients.md "Reconnect"): attempt n since the last welcome
/// waits a random 0..min(cap, initial × 2ⁿ) (`Backoff`, full jitter). A close 1001 means the hub
/// is restarting and expected back soon: the schedule starts over at attempt 0 (a short jittered
/// first delay), and for `goingAwayWindow` after that close the ceiling stops at `goingAwayCap`,
/// so the client is back within about that long of the hub's return instead of waiting out a
/// ceiling grown while the hub was down. Pure: the caller passes `now` and the random number.
///
/// Invariant: `attempt` counts the delays handed out since the last welcome or 1001.
struct ReconnectSchedule: Sendable {
    private(set) var attempt = 0
    private var goingAwayAt: ContinuousClock.Instant?

    /// A session started: the next drop starts from the first step.
    mutating func welcomed() {
        attempt = 0
        goingAwayAt = nil
    }

    /// The connection closed with `code`: the delay before the next attempt.
    mutating func dropped(
        code: UInt16, now: ContinuousClock.Instant, random: Double, backoff: Backoff, goingAwayCap: Duration,
        goingAwayWindow: Duration
    ) -> Duration {
        if code == 1001 {
            goingAwayAt = now
            attempt = 0
        }
        var steps = backoff
        if let goingAwayAt, now - goingAwayAt < goingAwayWindow, goingAwayCap < steps.cap { steps.cap = goingAwayCap }
        defer { attempt += 1 }
        return steps.delay(attempt: attempt, random: random)
    }
}
