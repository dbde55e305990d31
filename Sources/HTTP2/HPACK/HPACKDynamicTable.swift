/// The dynamic table (RFC 7541 §2.3.2, §4): the fields an encoder chose to index, newest first,
/// evicted oldest first to stay within the table's capacity. An encoder and its peer's decoder
/// each keep one and change them in the same order, so the same index names the same field.
///
/// Invariants:
/// - `size` is the sum of the entries' sizes and never exceeds `capacity`.
/// - Index 0 is the newest entry (wire index 62), `count - 1` the oldest.
struct HPACKDynamicTable: Sendable {
    /// One entry with its size as counted on the wire: the decoder's strings are the peer's
    /// octets read as UTF-8, which may have replaced invalid sequences, so sizes come from the
    /// octets, never from the strings, and the two tables evict in step whatever they hold.
    struct Entry: Sendable {
        var field: HeaderField
        var nameOctets: Int
        var valueOctets: Int

        /// The entry's size (§4.1).
        var size: Int { nameOctets + valueOctets + HeaderField.entryOverhead }

        /// An entry of the field's own octets (what an encoder and the static table hold).
        init(_ field: HeaderField) {
            self.init(field, nameOctets: field.name.utf8.count, valueOctets: field.value.utf8.count)
        }

        init(_ field: HeaderField, nameOctets: Int, valueOctets: Int) {
            self.field = field
            self.nameOctets = nameOctets
            self.valueOctets = valueOctets
        }
    }

    /// Oldest first from `oldest`; what lies before it was evicted and awaits compaction.
    private var entries: [Entry] = []
    private var oldest = 0
    private(set) var size = 0
    private(set) var capacity: Int

    init(capacity: Int) {
        precondition(capacity >= 0, "a table's capacity is a SETTINGS value, never negative")
        self.capacity = capacity
    }

    var count: Int { entries.count - oldest }

    /// The entry at `index`, 0 being the newest.
    subscript(index: Int) -> Entry {
        precondition(index >= 0 && index < count, "a dynamic table index the caller checked")
        return entries[entries.count - 1 - index]
    }

    /// The fields, newest first.
    var fields: [HeaderField] { entries[oldest...].reversed().map(\.field) }

    /// Adds `field` as the newest entry, evicting the oldest ones until it fits; an entry larger
    /// than the capacity leaves the table empty (§4.4).
    mutating func insert(_ entry: Entry) {
        evict(toFit: capacity - entry.size)
        guard entry.size <= capacity else { return }
        entries.append(entry)
        size += entry.size
    }

    /// A dynamic table size update (§4.3): evicts until the table fits the new capacity.
    mutating func setCapacity(_ newCapacity: Int) {
        precondition(newCapacity >= 0, "a table's capacity is a SETTINGS value, never negative")
        capacity = newCapacity
        evict(toFit: newCapacity)
    }

    /// The newest entry equal to `field` and the newest with its name, as indices from 0.
    func firstIndices(of field: HeaderField) -> (field: Int?, name: Int?) {
        var nameIndex: Int?
        for index in 0..<count {
            let candidate = self[index].field
            guard candidate.name == field.name else { continue }
            if candidate.value == field.value { return (index, nameIndex ?? index) }
            if nameIndex == nil { nameIndex = index }
        }
        return (nil, nameIndex)
    }

    private mutating func evict(toFit limit: Int) {
        while size > max(limit, 0) {
            size -= entries[oldest].size
            oldest += 1
        }
        // Evicted entries are dropped in batches, so each costs O(1) amortised.
        if oldest >= 32 && oldest * 2 >= entries.count {
            entries.removeFirst(oldest)
            oldest = 0
        }
    }
}
