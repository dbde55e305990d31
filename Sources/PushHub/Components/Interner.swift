/// Shares equal immutable objects: `intern` answers the equal one already in use, if any, so that
/// thousands of clients of one app build hold one object (and compare by identity).
///
/// Invariants: holds objects weakly, so it never keeps one alive; sweeps the references of freed
/// ones whenever it has doubled since the last sweep, so it holds at most about twice as many
/// references as there are live objects (a stream of distinct ones, such as clients declaring
/// made-up components, cannot grow it without bound).
struct Interner<Value: AnyObject & Hashable> {
    private struct Reference {
        weak var value: Value?
    }

    private var buckets: [Int: [Reference]] = [:]
    private var references = 0
    private var sweepAt = 64

    init() {}

    /// The equal object already in use, else `candidate` (held from now on).
    mutating func intern(_ candidate: Value) -> Value {
        let hash = candidate.hashValue
        if let bucket = buckets[hash] {
            for reference in bucket { if let held = reference.value, held == candidate { return held } }
        }
        buckets[hash, default: []].append(Reference(value: candidate))
        references += 1
        if references >= sweepAt { sweep() }
        return candidate
    }

    /// How many objects it refers to (freed ones not yet swept included).
    var count: Int { references }

    private mutating func sweep() {
        buckets = buckets.compactMapValues { bucket in
            let live = bucket.filter { $0.value != nil }
            return live.isEmpty ? nil : live
        }
        references = buckets.values.reduce(0) { $0 + $1.count }
        sweepAt = max(64, references * 2)
    }
}
