/// What `DeadlineHeap` orders: an object that knows its deadline and its place in the heap.
protocol HasDeadline: AnyObject {
    var scheduledDeadline: UInt64? { get set }
    var timerIndex: Int32 { get set }
}

/// A loop's connection deadlines: a binary min-heap of connections by `scheduledDeadline`, each
/// connection at most once (its `timerIndex` says where). Moving a deadline earlier moves the
/// entry; a later deadline leaves it (it fires early and the owner schedules again), so a
/// message costs no heap work. One entry per connection keeps the heap as small as the loop.
///
/// Invariants: `heap[i].timerIndex == i` and `heap[i].scheduledDeadline != nil`; a parent's
/// deadline is at most its children's; a connection not in the heap has `timerIndex == -1`.
struct DeadlineHeap<Entry: HasDeadline> {
    private var heap: [Entry] = []

    var nextDeadline: UInt64? { heap.first?.scheduledDeadline }

    /// Sets `connection`'s deadline to `deadline` unless it already has an earlier (or equal) one.
    mutating func schedule(_ connection: Entry, at deadline: UInt64) {
        if let scheduled = connection.scheduledDeadline, scheduled <= deadline { return }
        connection.scheduledDeadline = deadline
        if connection.timerIndex < 0 {
            connection.timerIndex = Int32(heap.count)
            heap.append(connection)
        }
        siftUp(Int(connection.timerIndex))
    }

    /// Removes and returns the connection with the earliest deadline if it is due at `now`.
    mutating func popDue(now: UInt64) -> Entry? {
        guard let first = heap.first, let deadline = first.scheduledDeadline, deadline <= now else { return nil }
        removeEntry(at: 0)
        return first
    }

    /// Takes `connection` out (it is being reaped).
    mutating func remove(_ connection: Entry) {
        guard connection.timerIndex >= 0 else { return }
        removeEntry(at: Int(connection.timerIndex))
    }

    private mutating func removeEntry(at index: Int) {
        let removed = heap[index]
        removed.timerIndex = -1
        removed.scheduledDeadline = nil
        let last = heap.removeLast()
        guard index < heap.count else { return }
        heap[index] = last
        last.timerIndex = Int32(index)
        siftUp(index)
        siftDown(Int(last.timerIndex))
    }

    private func deadline(_ index: Int) -> UInt64 { heap[index].scheduledDeadline ?? 0 }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            if deadline(parent) <= deadline(child) { break }
            swapEntries(parent, child)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count && deadline(left) < deadline(smallest) { smallest = left }
            if right < heap.count && deadline(right) < deadline(smallest) { smallest = right }
            if smallest == parent { return }
            swapEntries(parent, smallest)
            parent = smallest
        }
    }

    private mutating func swapEntries(_ a: Int, _ b: Int) {
        heap.swapAt(a, b)
        heap[a].timerIndex = Int32(a)
        heap[b].timerIndex = Int32(b)
    }
}
