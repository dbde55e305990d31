/// A list kept in chunks of at most `chunkSize` elements, for a value that lives in the hub state:
/// the control plane holds the state twice (`state` and `committed`), so the first change of a
/// batch copies what it touches. With chunks that is the outer array of chunk references and one
/// chunk, not every element (a webhook's 10,000 waiting events cost 2 ms per publish copied
/// whole; bench/README.md "Webhooks").
///
/// Invariants: no chunk is empty; `count` is the sum of the chunks' counts; the order of the
/// elements is the order they were appended in, less those removed.
struct ChunkedList<Element>: Sequence {
    static var chunkSize: Int { 256 }

    private var chunks: [[Element]] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }
    var first: Element? { chunks.first?.first }

    mutating func append(_ element: Element) {
        if chunks.isEmpty || chunks[chunks.count - 1].count >= Self.chunkSize {
            chunks.append([element])
        } else {
            chunks[chunks.count - 1].append(element)
        }
        count += 1
    }

    /// Removes and returns the first element (nil when empty).
    mutating func removeFirst() -> Element? {
        guard !chunks.isEmpty else { return nil }
        let element = chunks[0].removeFirst()
        if chunks[0].isEmpty { chunks.removeFirst() }
        count -= 1
        return element
    }

    /// Changes the first element that `matches` with `change`, which returns whether the element
    /// stays; returns whether one matched.
    @discardableResult
    mutating func update(first matches: (Element) -> Bool, _ change: (inout Element) -> Bool) -> Bool {
        for c in chunks.indices {
            guard let i = chunks[c].firstIndex(where: matches) else { continue }
            if !change(&chunks[c][i]) {
                chunks[c].remove(at: i)
                count -= 1
                if chunks[c].isEmpty { chunks.remove(at: c) }
            }
            return true
        }
        return false
    }

    func makeIterator() -> FlattenSequence<[[Element]]>.Iterator { chunks.joined().makeIterator() }
}

extension ChunkedList: Equatable where Element: Equatable {
    /// The same elements in the same order, however they are chunked.
    static func == (a: ChunkedList, b: ChunkedList) -> Bool { a.count == b.count && a.elementsEqual(b) }
}
extension ChunkedList: Sendable where Element: Sendable {}
