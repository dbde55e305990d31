import CLinux

/// Gives memory freed after a load back to the system (issue 9: RSS stayed 100–300 MB above
/// its start after abusive clients left).
///
/// glibc's allocator keeps what the hub frees — outbound queues of clients that left, their
/// connections, the buffers of a burst — in its per-thread arenas for reuse, and returns it to the
/// kernel only from the top of a heap. Every `interval` the control plane asks the allocator how
/// much free memory it holds (`mallinfo2`); when that is at least `threshold` and moved by
/// `churn` since the last trim, it calls `malloc_trim(0)`, which releases the free pages of every
/// arena.
///
/// Trimmed memory still counts as free in `mallinfo2`, so a change, not the level alone, is the
/// trigger: a hub that keeps a fragmented heap without activity trims once, not every interval;
/// a busy one at most once per interval.
struct MemoryReclaimer {
    static let interval: UInt64 = 2_000_000_000
    /// Free bytes the allocator may keep without a trim (a burst's worth of reuse).
    static let threshold = 8 << 20
    /// How much the free bytes must have moved since the last trim for another one.
    static let churn = 1 << 20

    private(set) var nextCheck: UInt64
    /// The allocator's free bytes right after the last trim (nil: none yet).
    private var freeAtLastTrim: Int?

    init(now: UInt64) { nextCheck = now + Self.interval }

    /// Trims when due and worth it; returns the free bytes the allocator held when it trimmed
    /// (nil: no trim).
    mutating func check(now: UInt64) -> Int? {
        guard now >= nextCheck else { return nil }
        nextCheck = now + Self.interval
        let free = Int(mallinfo2().fordblks)
        guard free >= Self.threshold, abs(free - (freeAtLastTrim ?? 0)) >= Self.churn else { return nil }
        malloc_trim(0)
        freeAtLastTrim = Int(mallinfo2().fordblks)
        return free
    }
}
