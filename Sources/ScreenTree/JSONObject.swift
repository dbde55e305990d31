/// A JSON object's members, kept sorted by name in RFC 8785 order (UTF-16 code units).
///
/// Sorted storage makes the canonical form a straight walk, equality and diffing a merge of
/// two sorted lists, and lookups a binary search — no hashing anywhere.
/// Invariants: names are unique and strictly increasing in `JSONWriter.precedes` order; names
/// are compared scalar by scalar (`isScalarEqual`), never by `==`.
public struct JSONObject: Equatable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Member = (key: String, value: JSONValue)

    public private(set) var members: [Member]

    public init() { members = [] }

    public init(_ dictionary: [String: JSONValue]) {
        members = dictionary.map { (key: $0.key, value: $0.value) }.sorted { JSONWriter.precedes($0.key, $1.key) }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// Members already sorted and unique (the reader checks both).
    public init(sortedMembers: [Member]) { members = sortedMembers }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    public var keys: [String] { members.map(\.key) }
    public var values: [JSONValue] { members.map(\.value) }

    public func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }

    /// The index of `key`, or where it would be inserted.
    func search(_ key: String) -> (index: Int, found: Bool) {
        // Screen nodes have a handful of members: comparing for equality only beats ordering.
        if members.count <= 8 {
            for i in members.indices where members[i].key.isScalarEqual(to: key) { return (i, true) }
            let insertion = members.firstIndex { JSONWriter.precedes(key, $0.key) } ?? members.count
            return (insertion, false)
        }
        var low = 0, high = members.count
        while low < high {
            let mid = (low + high) / 2
            if members[mid].key.isScalarEqual(to: key) { return (mid, true) }
            if JSONWriter.precedes(members[mid].key, key) { low = mid + 1 } else { high = mid }
        }
        return (low, false)
    }

    public subscript(key: String) -> JSONValue? {
        get {
            let (index, found) = search(key)
            return found ? members[index].value : nil
        }
        set {
            let (index, found) = search(key)
            switch (found, newValue) {
            case (true, let value?): members[index].value = value
            case (true, nil): members.remove(at: index)
            case (false, let value?): members.insert((key: key, value: value), at: index)
            case (false, nil): break
            }
        }
    }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        guard a.members.count == b.members.count else { return false }
        for (x, y) in zip(a.members, b.members) where !x.key.isScalarEqual(to: y.key) || x.value != y.value {
            return false
        }
        return true
    }
}
