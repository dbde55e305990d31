import Synchronization

/// The longest loop tick over the last one to two windows of `windowNanoseconds` (10 s): what
/// `pushhub_loop_lag_seconds` reports. Reading does not reset it, so any number of scrapers
/// (Prometheus, the console, an operator's curl) see the same peaks.
///
/// Every loop notes its ticks; the first note in a new window moves the current maximum to
/// `previous`. Relaxed atomics: two loops rotating at the same instant may drop one tick's
/// sample, which a gauge of peaks tolerates.
/// Invariant: `current` holds ticks of window `window` only; `previous` those of `window - 1`.
final class LagWindow: Sendable {
    static let windowNanoseconds: UInt64 = 10_000_000_000
    private let window = Atomic<Int>(0)
    private let current = Atomic<Int>(0)
    private let previous = Atomic<Int>(0)

    func note(_ nanoseconds: UInt64, now: UInt64) {
        rotate(to: Int(now / Self.windowNanoseconds))
        var seen = current.load(ordering: .relaxed)
        while Int(nanoseconds) > seen {
            let (exchanged, original) = current.compareExchange(
                expected: seen, desired: Int(nanoseconds), ordering: .relaxed)
            if exchanged { break }
            seen = original
        }
    }

    /// The longest tick of this window and the one before, in nanoseconds.
    func longest(now: UInt64) -> Int {
        rotate(to: Int(now / Self.windowNanoseconds))
        return max(current.load(ordering: .relaxed), previous.load(ordering: .relaxed))
    }

    private func rotate(to newWindow: Int) {
        let old = window.load(ordering: .relaxed)
        guard newWindow > old, window.compareExchange(expected: old, desired: newWindow, ordering: .relaxed).exchanged
        else { return }
        let carried = current.exchange(0, ordering: .relaxed)
        previous.store(newWindow == old + 1 ? carried : 0, ordering: .relaxed)
    }
}
