/// Decodes the header blocks a peer's HPACK encoder sends (RFC 7541), one block per call and in
/// the order they arrive on the connection: each block may change the dynamic table the next
/// ones refer to.
///
/// Invariants:
/// - The dynamic table never holds more than its capacity, and its capacity never exceeds
///   `maxTableSize` (the SETTINGS_HEADER_TABLE_SIZE this side announced): a size update asking
///   for more is an error (§6.3), as is one after a block's first field (§4.2).
/// - A block's decoded fields never count more than `maxHeaderListSize` octets (RFC 9113
///   §6.5.2): beyond it they are no longer kept, the block is still processed to keep the table
///   in step, then `HPACKError.headerListTooLarge` is thrown. Memory stays bounded by the block.
/// - Decoding depends only on the block's octets, not on the collection holding them.
///
/// After any other error the table no longer matches the peer's (COMPRESSION_ERROR, RFC 9113
/// §4.3): do not decode further blocks.
public struct HPACKDecoder: Sendable {
    public let maxTableSize: Int
    public let maxHeaderListSize: Int
    private var table: HPACKDynamicTable

    /// - Parameters:
    ///   - maxTableSize: the SETTINGS_HEADER_TABLE_SIZE this side announces (4096 is HTTP/2's
    ///     default); also the table's capacity until the peer's encoder lowers it.
    ///   - maxHeaderListSize: the SETTINGS_MAX_HEADER_LIST_SIZE this side announces; 64 KiB by
    ///     default, far above any APNs or FCM response.
    public init(maxTableSize: Int = 4096, maxHeaderListSize: Int = 64 << 10) {
        precondition(maxTableSize >= 0 && maxHeaderListSize >= 0, "HPACK limits are SETTINGS values, never negative")
        self.maxTableSize = maxTableSize
        self.maxHeaderListSize = maxHeaderListSize
        table = HPACKDynamicTable(capacity: maxTableSize)
    }

    /// The dynamic table's fields, newest first (wire index 62 first).
    public var dynamicTable: [HeaderField] { table.fields }
    /// The dynamic table's size in octets (§4.1), at most `dynamicTableCapacity`.
    public var dynamicTableSize: Int { table.size }
    /// The dynamic table's capacity: `maxTableSize`, or what the peer's last size update set.
    public var dynamicTableCapacity: Int { table.capacity }

    /// Decodes one complete header block (the HEADERS frame's fragment and its CONTINUATIONs').
    public mutating func decode(_ block: some Collection<UInt8>) throws(HPACKError) -> [HeaderField] {
        // One specialised decoder for contiguous bytes, whatever collection they come in.
        let outcome =
            block.withContiguousStorageIfAvailable { decode(contiguous: $0) }
            ?? Array(block).withUnsafeBufferPointer { decode(contiguous: $0) }
        return try outcome.get()
    }

    private mutating func decode(contiguous block: UnsafeBufferPointer<UInt8>) -> Result<[HeaderField], HPACKError> {
        do throws(HPACKError) {
            return .success(try decodeFields(HPACKBlockReader(block)))
        } catch {
            return .failure(error)
        }
    }

    /// The representations of §6, told apart by their first octet's high bits:
    ///
    ///     1xxxxxxx  indexed field (§6.1), 7-bit index
    ///     01xxxxxx  literal with incremental indexing (§6.2.1), 6-bit name index or 0
    ///     001xxxxx  dynamic table size update (§6.3), 5-bit size
    ///     0001xxxx  literal never indexed (§6.2.3), 4-bit name index or 0
    ///     0000xxxx  literal without indexing (§6.2.2), 4-bit name index or 0
    private mutating func decodeFields<Bytes>(_ reader: HPACKBlockReader<Bytes>) throws(HPACKError) -> [HeaderField] {
        var reader = reader
        var fields: [HeaderField] = []
        var listSize = 0
        var mayUpdateSize = true
        while let first = reader.nextOctet {
            let entry: HPACKDynamicTable.Entry
            if first & 0x80 != 0 {
                entry = try self.entry(at: reader.readInteger(prefixBits: 7))
            } else if first & 0x40 != 0 {
                entry = try readLiteral(&reader, prefixBits: 6)
                table.insert(entry)
            } else if first & 0x20 != 0 {
                guard mayUpdateSize else { throw .tableSizeUpdateNotAtBlockStart }
                let size = try reader.readInteger(prefixBits: 5)
                guard size <= maxTableSize else { throw .tableSizeUpdateTooLarge(size: size, limit: maxTableSize) }
                table.setCapacity(size)
                continue
            } else {
                entry = try readLiteral(&reader, prefixBits: 4)
            }
            mayUpdateSize = false
            listSize += entry.size
            if listSize <= maxHeaderListSize { fields.append(entry.field) }
        }
        guard listSize <= maxHeaderListSize else {
            throw .headerListTooLarge(size: listSize, limit: maxHeaderListSize)
        }
        return fields
    }

    /// A literal field (§6.2): its name by index or as a string, then its value.
    private func readLiteral<Bytes>(
        _ reader: inout HPACKBlockReader<Bytes>, prefixBits: Int
    ) throws(HPACKError) -> HPACKDynamicTable.Entry {
        let nameIndex = try reader.readInteger(prefixBits: prefixBits)
        let name: String
        let nameOctets: Int
        if nameIndex == 0 {
            let literal = try reader.readString()
            (name, nameOctets) = (literal.string, literal.octets)
        } else {
            let indexed = try entry(at: nameIndex)
            (name, nameOctets) = (indexed.field.name, indexed.nameOctets)
        }
        let value = try reader.readString()
        return HPACKDynamicTable.Entry(
            HeaderField(name, value.string), nameOctets: nameOctets, valueOctets: value.octets)
    }

    /// The entry at a wire index: 1...61 the static table, then the dynamic table (§2.3.3).
    private func entry(at index: Int) throws(HPACKError) -> HPACKDynamicTable.Entry {
        if index == 0 { throw .indexZero }
        if index <= HPACKStaticTable.count {
            return HPACKDynamicTable.Entry(HPACKStaticTable.fields[index - 1])
        }
        let dynamicIndex = index - HPACKStaticTable.count - 1
        guard dynamicIndex < table.count else {
            throw .indexOutOfRange(index: index, tableEntries: HPACKStaticTable.count + table.count)
        }
        return table[dynamicIndex]
    }
}
