import Glibc

/// The hub's durable history in the data dir (DESIGN §9 "Durability"): `state.snapshot` (records
/// that rebuild the whole state as of a sequence number, `Snapshot`) and `state.journal` (the
/// records after it), both in `Journal.Format`'s checksummed layout. Only the control plane touches it.
///
/// Group commit: `append` only encodes; `commit` writes everything appended since the last
/// commit with one write and one fsync. After `snapshotEvery` records — or, when the last snapshot
/// held more records, as many as it held — the owner writes a snapshot (atomically: temporary
/// file, fsync, rename) and the journal starts empty. The journal so grows at most to the size of
/// the state, and writing snapshots costs O(1) per record however large the state: a snapshot
/// every 1,000 records of a state of 100,000 push registrations wrote 1.4 GB while they came in.
///
/// Invariants: every journal record carries the next log sequence number (`lsn`); restoring
/// applies the snapshot, then exactly the journal records with a greater `lsn`, in order; a
/// damaged file or a record that does not decode stops the start, naming the file and byte
/// offset, and leaves the data dir as it was; after `restore` both files are in format 2.
final class StateJournal {
    let snapshotPath: String
    let journalPath: String
    let snapshotEvery: Int
    private var journal: Journal
    private var seq = 0
    private var recordsSinceSnapshot = 0
    /// Records in the last snapshot written or read.
    private var recordsInSnapshot = 0
    private var pending: [[UInt8]] = []

    /// Files of the per-store layout an earlier PushHub wrote; this one does not read them.
    static let legacyFiles = ["screens.journal", "cohorts.journal", "syncs.journal", "experiments.journal"]

    /// A data dir this version cannot read.
    struct UnsupportedLayout: Error, CustomStringConvertible {
        var description: String
    }

    /// The two files' names in the data dir.
    static let snapshotFile = "state.snapshot"
    static let journalFile = "state.journal"

    init(directory: String, snapshotEvery: Int = 1000) throws {
        snapshotPath = directory + "/" + Self.snapshotFile
        journalPath = directory + "/" + Self.journalFile
        self.snapshotEvery = snapshotEvery
        try FileBytes.makeDirectories(directory)
        if access(journalPath, F_OK) != 0 && access(snapshotPath, F_OK) != 0 {
            let legacy = Self.legacyFiles.filter { access(directory + "/" + $0, F_OK) == 0 }
            if !legacy.isEmpty {
                throw UnsupportedLayout(
                    description:
                        "\(directory) holds \(legacy.joined(separator: ", ")) from an earlier PushHub with one journal "
                        + "per store; this version keeps one journal (state.journal). Start with an empty data dir "
                        + "and publish again, or keep running the earlier version on this one.")
            }
        }
        journal = try Journal(path: journalPath)
    }

    /// Feeds every durable record to `apply`, oldest first; then cuts a torn journal tail and
    /// rewrites a file of format 1 in format 2. A damaged file throws `Journal.Corruption` (naming
    /// the file and byte offset) before anything in the data dir is changed.
    func restore(_ apply: (HubRecord) -> Void) throws {
        let snapshot = try Snapshot.read(path: snapshotPath)
        for record in snapshot?.records ?? [] { apply(record) }
        recordsInSnapshot = snapshot?.records.count ?? 0
        let snapshotSeq = snapshot?.lsn ?? 0
        let contents =
            try Journal.read(path: journalPath) ?? Journal.Contents(records: [], tornAt: nil, format: .checkedHeaders)
        seq = snapshotSeq
        for record in contents.records {
            let json = try HubRecord.storedJSON(record.payload, path: journalPath, offset: record.offset)
            guard let recordSeq = json["lsn"]?.intValue else {
                throw Journal.Corruption(path: journalPath, offset: record.offset, reason: "a record without \"lsn\"")
            }
            guard recordSeq > snapshotSeq else { continue }
            apply(try HubRecord(stored: json, path: journalPath, offset: record.offset))
            seq = recordSeq
            recordsSinceSnapshot += 1
        }
        if let tornAt = contents.tornAt {
            Log.warning(
                "dropping a torn record at the end of the journal", [("file", journalPath), ("offset", tornAt)])
        }
        if let snapshot, snapshot.format == .uncheckedHeaders {
            try FileBytes.writeAtomically(
                Snapshot.bytes(lsn: snapshot.lsn, records: snapshot.records), to: snapshotPath)
            Log.info("rewrote the snapshot in journal format 2", [("file", snapshotPath)])
        }
        if contents.format == .uncheckedHeaders {
            try FileBytes.writeAtomically(Journal.file(contents.records.map(\.payload)), to: journalPath)
            Log.info("rewrote the journal in journal format 2", [("file", journalPath)])
        } else if let tornAt = contents.tornAt {
            try Journal.truncate(path: journalPath, to: tornAt)
        }
        journal = try Journal(path: journalPath)
    }

    /// Encodes `record` for the next commit (no I/O).
    func append(_ record: HubRecord) {
        guard case .object(var members) = record.json else { preconditionFailure("records are JSON objects") }
        members["lsn"] = .number(Double(seq + pending.count + 1))
        pending.append(JSONWriter.write(.object(members)))
    }

    /// Writes and fsyncs every record appended since the last commit.
    /// - Returns: how many records the fsync covered.
    /// - Throws: the failed system call; the records are then dropped and the file cut back.
    func commit() throws(SystemError) -> Int {
        let records = pending
        pending.removeAll(keepingCapacity: true)
        guard !records.isEmpty else { return 0 }
        try journal.append(records)
        seq += records.count
        recordsSinceSnapshot += records.count
        return records.count
    }

    var isSnapshotDue: Bool { recordsSinceSnapshot >= max(snapshotEvery, recordsInSnapshot) && pending.isEmpty }

    /// Replaces the history with `records` (the whole state as of the last commit).
    func writeSnapshot(_ records: [HubRecord]) throws(SystemError) {
        try FileBytes.writeAtomically(Snapshot.bytes(lsn: seq, records: records), to: snapshotPath)
        try journal.truncate()
        recordsSinceSnapshot = 0
        recordsInSnapshot = records.count
    }
}
