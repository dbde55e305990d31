/// `state.snapshot`: the whole hub state as of a log sequence number (DESIGN §9 "Durability"),
/// in `Journal.Format`'s layout. Record 0 is the header `{"kind":"snapshot","lsn":N,"records":K}`;
/// exactly K `HubRecord`s follow.
///
/// A snapshot is written whole (temporary file, fsync, rename), so it has no torn tail: a damaged
/// byte anywhere and a cut at any offset are corruption, named with the file and byte offset. The
/// count makes a cut at a record boundary visible. A format 1 snapshot (it has no count) is read
/// as it is and rewritten in format 2 by the start that reads it (`StateJournal.restore`).
struct Snapshot {
    var lsn: Int
    var records: [HubRecord]
    var format: Journal.Format

    /// The snapshot at `path`, or nil when there is none.
    static func read(path: String) throws -> Snapshot? {
        guard let bytes = try FileBytes.read(path) else { return nil }
        return try Snapshot(bytes: bytes, path: path)
    }

    /// Decodes a snapshot file's `bytes`.
    /// - Throws: `Journal.Corruption` naming `path` and the offset of whatever is wrong.
    init(bytes: [UInt8], path: String) throws(Journal.Corruption) {
        guard !bytes.isEmpty else { throw Journal.Corruption(path: path, offset: 0, reason: "the snapshot is empty") }
        let contents = try Journal.read(bytes, path: path)
        if let tornAt = contents.tornAt {
            throw Journal.Corruption(
                path: path, offset: tornAt, reason: "the snapshot ends inside a record (snapshots are written whole)")
        }
        guard let first = contents.records.first else {
            throw Journal.Corruption(path: path, offset: bytes.count, reason: "the snapshot has no header record")
        }
        let header = try HubRecord.storedJSON(first.payload, path: path, offset: first.offset)
        guard header["kind"]?.stringValue == "snapshot", let lsn = header["lsn"]?.intValue else {
            throw Journal.Corruption(
                path: path, offset: first.offset, reason: "a snapshot starts with its header record")
        }
        let stored = contents.records.dropFirst()
        let count = header["records"]?.intValue
        if count == nil && contents.format == .checkedHeaders {
            throw Journal.Corruption(
                path: path, offset: first.offset, reason: "the snapshot header does not say how many records follow")
        }
        if let count, count != stored.count {
            let offset: Int  // where the first missing record would begin, or the first extra one begins
            if count > stored.count {
                offset = bytes.count
            } else if count >= 0 {
                offset = stored[stored.startIndex + count].offset
            } else {
                offset = first.offset
            }
            throw Journal.Corruption(
                path: path, offset: offset, reason: "the header says \(count) records follow, and \(stored.count) do")
        }
        var records: [HubRecord] = []
        records.reserveCapacity(stored.count)
        for record in stored {
            let json = try HubRecord.storedJSON(record.payload, path: path, offset: record.offset)
            records.append(try HubRecord(stored: json, path: path, offset: record.offset))
        }
        self.lsn = lsn
        self.records = records
        format = contents.format
    }

    /// A whole snapshot file (format 2) holding `records` as of `lsn`.
    static func bytes(lsn: Int, records: [HubRecord]) -> [UInt8] {
        var payloads = [
            JSONWriter.write(
                .object([
                    "kind": .string("snapshot"), "lsn": .number(Double(lsn)), "records": .number(Double(records.count)),
                ]))
        ]
        payloads.reserveCapacity(records.count + 1)
        for record in records { payloads.append(JSONWriter.write(record.json)) }
        return Journal.file(payloads)
    }
}
