/// A loop's timers: a binary min-heap of (deadline, payload) — connection tokens for the
/// connections' deadlines, scheduled deliveries for spread syncs.
///
/// Entries are never cancelled; an owner whose deadline moved ignores the stale entry when it
/// fires and schedules its new one (cheaper than removal from the middle of a heap).
/// Invariant: `heap[i].deadline <= heap[2i+1].deadline` and `<= heap[2i+2].deadline`.
struct Timers<Payload> {
    struct Entry {
        var deadline: UInt64
        var payload: Payload
    }

    private var heap: [Entry] = []

    var count: Int { heap.count }
    var nextDeadline: UInt64? { heap.first?.deadline }

    mutating func schedule(_ payload: Payload, at deadline: UInt64) {
        heap.append(Entry(deadline: deadline, payload: payload))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            if heap[parent].deadline <= heap[child].deadline { break }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    /// Removes and returns the earliest entry if it is due at `now`.
    mutating func popDue(now: UInt64) -> Entry? {
        guard let first = heap.first, first.deadline <= now else { return nil }
        let last = heap.removeLast()
        if heap.isEmpty { return first }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count && heap[right].deadline < heap[smallest].deadline { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }
}
