import CLinux

/// Gives memory freed after a load back to the system (issue 9: RSS stayed 100–300 MB above
/// its start after abusive clients left).
///
/// glibc's allocator keeps what the hub frees — outbound queues of clients that left, their
/// connections, the buffers of a burst — in its per-thread arenas for reuse, and returns it to the
/// kernel only from the top of a heap. Every `interval` the control plane asks the allocator how
/// much free memory it holds (`mallinfo2`); when that grew by `threshold` over the least it held
/// since the last trim, it calls `malloc_trim(0)`, which releases the free pages of every arena.
///
/// Trimmed memory still counts as free in `mallinfo2`, so growth, not the level, is the trigger:
/// a hub that keeps a fragmented heap trims once, not every interval. A load that comes and goes
/// between two checks is missed until the next one that grows the free memory again.
struct MemoryReclaimer {
    static let interval: UInt64 = 2_000_000_000
    /// Free bytes the allocator may gain without a trim (a burst's worth of reuse).
    static let threshold = 8 << 20

    private(set) var nextCheck: UInt64
    /// The least free memory seen since the last trim (the start counts as one).
    private var leastFree = 0

    init(now: UInt64) { nextCheck = now + Self.interval }

    /// Trims when due and worth it; returns the free bytes the allocator held when it trimmed
    /// (nil: no trim).
    mutating func check(now: UInt64) -> Int? {
        guard now >= nextCheck else { return nil }
        nextCheck = now + Self.interval
        let free = Int(mallinfo2().fordblks)
        leastFree = min(leastFree, free)
        guard free - leastFree >= Self.threshold else { return nil }
        malloc_trim(0)
        leastFree = free
        return free
    }
}
