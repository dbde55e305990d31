/// The keyed tree diff of DESIGN §4: RFC 6902 operations that turn one tree into another.
///
/// - Objects: removed members `remove`, new ones `add`, common ones are diffed in place.
/// - Keyed arrays (every element an object with a string `"id"`, ids unique on both sides):
///   elements are matched by id. Gone ids are removed, new ids added, and a reordering moves
///   only the elements outside the longest run that kept its relative order; then each matched
///   element is diffed in place, so an edit deep inside a child is one deep `replace`.
/// - Other arrays: the common prefix and suffix are kept, the middle is diffed position by
///   position, and the excess removed or added.
/// - Anything else that differs is one `replace`.
///
/// Invariant: `JSONPatch(diff(a, b)).apply(to: a) == b` for all `a`, `b` (property-tested).
public enum JSONPatchDiff {
    public static func diff(_ old: JSONValue, _ new: JSONValue) -> JSONPatch {
        var operations: [JSONPatch.Operation] = []
        diff(old, new, at: JSONPointer(), into: &operations)
        return JSONPatch(operations)
    }

    static func diff(_ old: JSONValue, _ new: JSONValue, at path: JSONPointer, into operations: inout [JSONPatch.Operation]) {
        if old == new { return }
        switch (old, new) {
        case (.object(let a), .object(let b)):
            for key in JSONWriter.sortedKeys(a) where b[key] == nil { operations.append(.remove(path.appending(key))) }
            for key in JSONWriter.sortedKeys(b) {
                if let before = a[key] {
                    diff(before, b[key]!, at: path.appending(key), into: &operations)
                } else {
                    operations.append(.add(path.appending(key), b[key]!))
                }
            }
        case (.array(let a), .array(let b)):
            if let oldIDs = keys(a), let newIDs = keys(b) {
                diffKeyed(a, oldIDs, b, newIDs, at: path, into: &operations)
            } else {
                diffPositional(a, b, at: path, into: &operations)
            }
        default:
            operations.append(.replace(path, new))
        }
    }

    /// The `"id"` of every element, if all are objects with unique string ids.
    static func keys(_ elements: [JSONValue]) -> [String]? {
        var ids: [String] = []
        ids.reserveCapacity(elements.count)
        var seen = Set<String>()
        for element in elements {
            guard case .object(let members) = element, case .string(let id)? = members["id"], seen.insert(id).inserted else {
                return nil
            }
            ids.append(id)
        }
        return ids
    }

    static func diffKeyed(_ a: [JSONValue], _ oldIDs: [String], _ b: [JSONValue], _ newIDs: [String], at path: JSONPointer,
                          into operations: inout [JSONPatch.Operation]) {
        let newIndex = Dictionary(uniqueKeysWithValues: newIDs.enumerated().map { ($1, $0) })
        let oldIndex = Dictionary(uniqueKeysWithValues: oldIDs.enumerated().map { ($1, $0) })
        // 1. Remove what is gone, from the end so that earlier indices stay valid.
        var current: [String] = []
        for i in stride(from: oldIDs.count - 1, through: 0, by: -1) where newIndex[oldIDs[i]] == nil {
            operations.append(.remove(path.appending(i)))
        }
        current = oldIDs.filter { newIndex[$0] != nil }
        // 2. The elements that keep their relative order stay; the others move.
        let stable = longestIncreasingRun(current.map { newIndex[$0]! })
        let stableIDs = Set(stable.map { newIDs[$0] })
        // 3. In target order, put each moved or new element right after its predecessor.
        for (target, id) in newIDs.enumerated() where !stableIDs.contains(id) {
            let predecessor = target == 0 ? -1 : current.firstIndex(of: newIDs[target - 1])!
            if let from = current.firstIndex(of: id) {
                let to = from < predecessor ? predecessor : predecessor + 1
                if to == from { continue }
                current.remove(at: from)
                current.insert(id, at: to)
                operations.append(.move(from: path.appending(from), to: path.appending(to)))
            } else {
                current.insert(id, at: predecessor + 1)
                operations.append(.add(path.appending(predecessor + 1), b[target]))
            }
        }
        // 4. Diff each kept element in place, at its final index.
        for (target, id) in newIDs.enumerated() {
            if let old = oldIndex[id] { diff(a[old], b[target], at: path.appending(target), into: &operations) }
        }
    }

    /// Indices (into `sequence`'s values) of a longest strictly increasing subsequence,
    /// returned as the values themselves (target positions), O(n log n).
    static func longestIncreasingRun(_ sequence: [Int]) -> [Int] {
        var tails: [Int] = []       // tails[k]: index in `sequence` of the smallest tail of a run of length k+1
        var previous = [Int](repeating: -1, count: sequence.count)
        for (i, value) in sequence.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let mid = (low + high) / 2
                if sequence[tails[mid]] < value { low = mid + 1 } else { high = mid }
            }
            if low > 0 { previous[i] = tails[low - 1] }
            if low == tails.count { tails.append(i) } else { tails[low] = i }
        }
        var run: [Int] = []
        var i = tails.last ?? -1
        while i >= 0 {
            run.append(sequence[i])
            i = previous[i]
        }
        return run.reversed()
    }

    static func diffPositional(_ a: [JSONValue], _ b: [JSONValue], at path: JSONPointer, into operations: inout [JSONPatch.Operation]) {
        var prefix = 0
        while prefix < a.count && prefix < b.count && a[prefix] == b[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < a.count - prefix && suffix < b.count - prefix && a[a.count - 1 - suffix] == b[b.count - 1 - suffix] {
            suffix += 1
        }
        let oldMiddle = a.count - prefix - suffix
        let newMiddle = b.count - prefix - suffix
        let common = min(oldMiddle, newMiddle)
        for i in 0..<common { diff(a[prefix + i], b[prefix + i], at: path.appending(prefix + i), into: &operations) }
        if oldMiddle > newMiddle {
            for i in stride(from: prefix + oldMiddle - 1, through: prefix + common, by: -1) { operations.append(.remove(path.appending(i))) }
        } else {
            for i in common..<newMiddle { operations.append(.add(path.appending(prefix + i), b[prefix + i])) }
        }
    }
}
