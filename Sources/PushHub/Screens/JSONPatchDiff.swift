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
        var walk = Walk()
        walk.diff(old, new)
        return JSONPatch(walk.operations)
    }

    /// One walk over both trees. The path is a stack of tokens, turned into a pointer only
    /// when an operation is emitted; containers are compared member by member, never with a
    /// deep equality check first (which would walk equal subtrees once per level).
    struct Walk {
        /// A path step, turned into a pointer token only when an operation is emitted.
        enum Step {
            case key(String)
            case index(Int)
            var token: String {
                switch self {
                case .key(let key): key
                case .index(let index): String(index)
                }
            }
        }

        var operations: [JSONPatch.Operation] = []
        var path: [Step] = []

        var pointer: JSONPointer { JSONPointer(path.map(\.token)) }

        func pointer(_ last: String) -> JSONPointer { JSONPointer(path.map(\.token) + [last]) }

        mutating func diff(_ old: JSONValue, _ new: JSONValue) {
            switch (old, new) {
            case (.object(let a), .object(let b)):
                diffObjects(a, b)
            case (.array(let a), .array(let b)):
                if a.count == b.count && Self.haveSameIDs(a, b) {
                    diffPairwise(a, b, count: a.count)  // the same keyed children in the same order: the common case
                } else if let oldIDs = ids(a), let newIDs = ids(b), Set(oldIDs).count == oldIDs.count,
                    Set(newIDs).count == newIDs.count
                {
                    diffKeyed(a, oldIDs, b, newIDs)
                } else {
                    diffPositional(a, b)
                }
            default:
                if old != new { operations.append(.replace(pointer, new)) }
            }
        }

        /// A merge of two member lists in canonical order: removed, added and common members,
        /// in name order (so a patch is deterministic).
        mutating func diffObjects(_ a: JSONObject, _ b: JSONObject) {
            let x = a.members, y = b.members
            var i = 0, j = 0
            while i < x.count || j < y.count {
                if i < x.count && j < y.count && x[i].key.isScalarEqual(to: y[j].key) {
                    if x[i].value.isContainer || y[j].value.isContainer {
                        path.append(.key(x[i].key))
                        diff(x[i].value, y[j].value)
                        path.removeLast()
                    } else if x[i].value != y[j].value {
                        operations.append(.replace(pointer(x[i].key), y[j].value))  // a leaf: no descent
                    }
                    i += 1
                    j += 1
                } else if j == y.count || (i < x.count && JSONWriter.precedes(x[i].key, y[j].key)) {
                    operations.append(.remove(pointer(x[i].key)))
                    i += 1
                } else {
                    operations.append(.add(pointer(y[j].key), y[j].value))
                    j += 1
                }
            }
        }

        mutating func diffPairwise(_ a: [JSONValue], _ b: [JSONValue], count: Int, offset: Int = 0) {
            for i in 0..<count {
                path.append(.index(offset + i))
                diff(a[offset + i], b[offset + i])
                path.removeLast()
            }
        }

        /// Whether element i of both arrays is an object with the same string id, for every i.
        static func haveSameIDs(_ a: [JSONValue], _ b: [JSONValue]) -> Bool {
            for i in a.indices {
                guard case .object(let x) = a[i], case .object(let y) = b[i], case .string(let p)? = x["id"],
                    case .string(let q)? = y["id"], p.isScalarEqual(to: q)
                else { return false }
            }
            return !a.isEmpty
        }

        /// The `"id"` of every element, if all are objects with a string id.
        func ids(_ elements: [JSONValue]) -> [String]? {
            var ids: [String] = []
            ids.reserveCapacity(elements.count)
            for element in elements {
                guard case .object(let members) = element, case .string(let id)? = members["id"] else { return nil }
                ids.append(id)
            }
            return ids
        }

        mutating func diffKeyed(_ a: [JSONValue], _ oldIDs: [String], _ b: [JSONValue], _ newIDs: [String]) {
            let newIndex = Dictionary(uniqueKeysWithValues: newIDs.enumerated().map { ($1, $0) })
            let oldIndex = Dictionary(uniqueKeysWithValues: oldIDs.enumerated().map { ($1, $0) })
            // 1. Remove what is gone, from the end so that earlier indices stay valid.
            for i in stride(from: oldIDs.count - 1, through: 0, by: -1) where newIndex[oldIDs[i]] == nil {
                operations.append(.remove(pointer(String(i))))
            }
            var current = oldIDs.filter { newIndex[$0] != nil }
            // 2. The elements that keep their relative order stay; the others move.
            let stable = Set(longestIncreasingRun(current.map { newIndex[$0]! }).map { newIDs[$0] })
            // 3. In target order, put each moved or new element right after its predecessor.
            for (target, id) in newIDs.enumerated() where !stable.contains(id) {
                let predecessor = target == 0 ? -1 : current.firstIndex(of: newIDs[target - 1])!
                if let from = current.firstIndex(of: id) {
                    let to = from < predecessor ? predecessor : predecessor + 1
                    if to == from { continue }
                    current.remove(at: from)
                    current.insert(id, at: to)
                    operations.append(.move(from: pointer(String(from)), to: pointer(String(to))))
                } else {
                    current.insert(id, at: predecessor + 1)
                    operations.append(.add(pointer(String(predecessor + 1)), b[target]))
                }
            }
            // 4. Diff each kept element in place, at its final index.
            for (target, id) in newIDs.enumerated() {
                guard let old = oldIndex[id] else { continue }
                path.append(.index(target))
                diff(a[old], b[target])
                path.removeLast()
            }
        }

        mutating func diffPositional(_ a: [JSONValue], _ b: [JSONValue]) {
            var prefix = 0
            while prefix < a.count && prefix < b.count && a[prefix] == b[prefix] { prefix += 1 }
            var suffix = 0
            while suffix < a.count - prefix && suffix < b.count - prefix
                && a[a.count - 1 - suffix] == b[b.count - 1 - suffix]
            {
                suffix += 1
            }
            let oldMiddle = a.count - prefix - suffix
            let newMiddle = b.count - prefix - suffix
            let common = min(oldMiddle, newMiddle)
            diffPairwise(a, b, count: common, offset: prefix)
            if oldMiddle > newMiddle {
                for i in stride(from: prefix + oldMiddle - 1, through: prefix + common, by: -1) {
                    operations.append(.remove(pointer(String(i))))
                }
            } else {
                for i in common..<newMiddle { operations.append(.add(pointer(String(prefix + i)), b[prefix + i])) }
            }
        }
    }

    /// The `"id"` of every element, if all are objects with unique string ids (keyed children).
    static func keys(_ elements: [JSONValue]) -> [String]? {
        guard let ids = Walk().ids(elements), Set(ids).count == ids.count else { return nil }
        return ids
    }

    /// Indices (into `sequence`'s values) of a longest strictly increasing subsequence,
    /// returned as the values themselves (target positions), O(n log n).
    static func longestIncreasingRun(_ sequence: [Int]) -> [Int] {
        var tails: [Int] = []  // tails[k]: index in `sequence` of the smallest tail of a run of length k+1
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

}
