import PushHub

extension JSONValue {
    /// Whether the tree has at most `limit` nodes, counted without walking more than that
    /// many: a tree built by copying a subtree into itself shares storage, so it can stand
    /// for exponentially many nodes that a walk (writing, comparing) would visit one by one.
    func hasAtMost(nodes limit: Int) -> Bool {
        var budget = limit
        return fits(&budget)
    }

    private func fits(_ budget: inout Int) -> Bool {
        budget -= 1
        guard budget >= 0 else { return false }
        switch self {
        case .null, .bool, .number, .string: return true
        case .array(let elements): return elements.allSatisfy { $0.fits(&budget) }
        case .object(let members): return members.allSatisfy { $0.value.fits(&budget) }
        }
    }
}
