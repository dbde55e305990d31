/// Encodes header lists into header blocks for a peer's HPACK decoder (RFC 7541), one block per
/// call in the order they are sent on the connection.
///
/// Each field becomes, in order of preference: an index into the static or dynamic table (§6.1);
/// a literal added to the dynamic table (§6.2.1), naming its name by index when a table has it;
/// or, for a field too large for the table, a literal without indexing (§6.2.2). Fields named in
/// `sensitiveNames` are always literals never indexed (§6.2.3, §7.1.3): secrets such as bearer
/// tokens never enter a table, where a later guess could probe them, and intermediaries must not
/// index them either. Strings are Huffman coded unless that is longer (§5.2; when both take as
/// many octets, Huffman, as RFC 7541 Appendix C.6 does).
///
/// Invariant: the dynamic table's capacity never exceeds `maxTableSize` nor the peer's
/// SETTINGS_HEADER_TABLE_SIZE. The peer's decoder starts with a table at least as large as ours
/// (its setting, 4096 by default), which is safe without a size update: both tables add the
/// same entries in the same order, and the larger only keeps older ones the encoder never refers
/// to. A change of the peer's setting is signalled at the start of the next block (§4.2).
public struct HPACKEncoder: Sendable {
    /// Field names always encoded as literals never indexed.
    public static let sensitiveNames: Set<String> = ["authorization", "proxy-authorization"]

    /// How one literal field is represented (§6.2).
    enum Indexing {
        case incremental, withoutIndexing, neverIndexed
    }

    /// The size updates owed to the peer's decoder at the next block: the smallest capacity set
    /// since the last block, then the current one (§4.2: both, when the table shrank then grew).
    private struct PendingSizeUpdate {
        var smallest: Int
        var final: Int
    }

    public let maxTableSize: Int
    /// Whether strings may be Huffman coded (unless longer); false writes them as they are, as
    /// RFC 7541 Appendix C.3 and C.5 do.
    public var usesHuffman: Bool
    private var table: HPACKDynamicTable
    private var pendingSizeUpdate: PendingSizeUpdate?

    /// - Parameter maxTableSize: the most octets this encoder keeps in its dynamic table; it
    ///   uses less when the peer's SETTINGS_HEADER_TABLE_SIZE is lower (`setPeerMaxTableSize`).
    public init(maxTableSize: Int = 4096, usesHuffman: Bool = true) {
        precondition(maxTableSize >= 0, "a table size is never negative")
        self.maxTableSize = maxTableSize
        self.usesHuffman = usesHuffman
        table = HPACKDynamicTable(capacity: min(maxTableSize, HPACKEncoder.defaultPeerTableSize))
    }

    /// HTTP/2's initial SETTINGS_HEADER_TABLE_SIZE (RFC 9113 §6.5.2).
    static let defaultPeerTableSize = 4096

    /// The dynamic table's fields, newest first.
    public var dynamicTable: [HeaderField] { table.fields }
    /// The dynamic table's size in octets (§4.1).
    public var dynamicTableSize: Int { table.size }

    /// The peer announced SETTINGS_HEADER_TABLE_SIZE `size`: the table's capacity becomes the
    /// smaller of it and `maxTableSize`, signalled at the start of the next block.
    public mutating func setPeerMaxTableSize(_ size: Int) {
        precondition(size >= 0, "a SETTINGS value is unsigned")
        let capacity = min(size, maxTableSize)
        let smallest = min(pendingSizeUpdate?.smallest ?? capacity, capacity)
        pendingSizeUpdate = PendingSizeUpdate(smallest: smallest, final: capacity)
    }

    /// Appends the header block of `headers` to `out`.
    public mutating func encode(_ headers: [HeaderField], into out: inout [UInt8]) {
        if let update = pendingSizeUpdate {
            pendingSizeUpdate = nil
            if update.smallest < update.final { updateTableSize(update.smallest, into: &out) }
            updateTableSize(update.final, into: &out)
        }
        for header in headers {
            let field = HeaderField(Self.lowercased(header.name), header.value)
            if Self.sensitiveNames.contains(field.name) {
                encode(field, indexing: .neverIndexed, into: &out)
            } else if let index = index(of: field).field {
                HPACKInteger.encode(index, prefixBits: 7, flags: 0x80, into: &out)
            } else if field.hpackSize <= table.capacity {
                encode(field, indexing: .incremental, into: &out)
            } else {
                encode(field, indexing: .withoutIndexing, into: &out)
            }
        }
    }

    /// Appends `field` as a literal (§6.2), its name by index when a table has it.
    mutating func encode(_ field: HeaderField, indexing: Indexing, into out: inout [UInt8]) {
        let nameIndex = index(of: field).name ?? 0
        switch indexing {
        case .incremental: HPACKInteger.encode(nameIndex, prefixBits: 6, flags: 0x40, into: &out)
        case .withoutIndexing: HPACKInteger.encode(nameIndex, prefixBits: 4, flags: 0x00, into: &out)
        case .neverIndexed: HPACKInteger.encode(nameIndex, prefixBits: 4, flags: 0x10, into: &out)
        }
        if nameIndex == 0 { encodeString(field.name, into: &out) }
        encodeString(field.value, into: &out)
        if indexing == .incremental { table.insert(HPACKDynamicTable.Entry(field)) }
    }

    /// A dynamic table size update (§6.3), applied to our table as the peer's decoder will.
    private mutating func updateTableSize(_ capacity: Int, into out: inout [UInt8]) {
        HPACKInteger.encode(capacity, prefixBits: 5, flags: 0x20, into: &out)
        table.setCapacity(capacity)
    }

    /// The wire indices of `field` and of its name, static table first (its indices are small).
    private func index(of field: HeaderField) -> (field: Int?, name: Int?) {
        let staticField = HPACKStaticTable.indexOfField[field]
        let staticName = HPACKStaticTable.indexOfName[field.name]
        if staticField != nil { return (staticField, staticName) }
        let dynamic = table.firstIndices(of: field)
        let offset = HPACKStaticTable.count + 1
        return (dynamic.field.map { $0 + offset }, staticName ?? dynamic.name.map { $0 + offset })
    }

    /// A string literal (§5.2): Huffman coded unless that is longer, else as it is.
    private func encodeString(_ string: String, into out: inout [UInt8]) {
        let octets = string.utf8
        let huffmanLength = usesHuffman ? Huffman.encodedLength(octets) : Int.max
        if huffmanLength <= octets.count {
            HPACKInteger.encode(huffmanLength, prefixBits: 7, flags: 0x80, into: &out)
            Huffman.encode(octets, into: &out)
        } else {
            HPACKInteger.encode(octets.count, prefixBits: 7, flags: 0x00, into: &out)
            out.append(contentsOf: octets)
        }
    }

    /// `name` with ASCII capitals lower-cased (RFC 9113 §8.2.1); itself when it has none.
    private static func lowercased(_ name: String) -> String {
        guard name.utf8.contains(where: { (0x41...0x5A).contains($0) }) else { return name }
        return String(decoding: name.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
