import Foundation
import Glibc

/// The hub's durable history in the data dir (DESIGN §9 "Durability"): `state.snapshot` (records
/// that rebuild the whole state as of a sequence number) and `state.journal` (the records after
/// it), both in `Journal`'s checksummed layout. Only the control plane touches it.
///
/// Group commit: `append` only encodes; `commit` writes everything appended since the last
/// commit with one write and one fsync. Every `snapshotEvery` records the owner writes a snapshot
/// (atomically: temporary file, fsync, rename) and the journal starts empty.
///
/// Invariants: every journal record carries the next log sequence number (`lsn`); restoring
/// applies the snapshot, then exactly the journal records with a greater `lsn`, in order; a record that does not decode
/// stops the start, naming the file and byte offset.
final class StateJournal {
    let snapshotPath: String
    let journalPath: String
    let snapshotEvery: Int
    private var journal: Journal
    private var seq = 0
    private var recordsSinceSnapshot = 0
    private var pending: [[UInt8]] = []

    /// Files of the per-store layout an earlier PushHub wrote; this one does not read them.
    static let legacyFiles = ["screens.journal", "cohorts.journal", "syncs.journal", "experiments.journal"]

    /// A data dir this version cannot read.
    struct UnsupportedLayout: Error, CustomStringConvertible {
        var description: String
    }

    init(directory: String, snapshotEvery: Int = 1000) throws {
        snapshotPath = directory + "/state.snapshot"
        journalPath = directory + "/state.journal"
        self.snapshotEvery = snapshotEvery
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
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

    /// Feeds every durable record to `apply`, oldest first; cuts a torn journal tail.
    func restore(_ apply: (HubRecord) -> Void) throws {
        var snapshotSeq = 0
        let (snapshot, snapshotTorn) = try Journal.read(path: snapshotPath)
        if snapshotTorn != nil {
            throw Journal.Corruption(path: snapshotPath, offset: snapshotTorn ?? 0, reason: "the snapshot is incomplete")
        }
        var offset = 0
        for (index, payload) in snapshot.enumerated() {
            defer { offset += 8 + payload.count }
            let json = try Self.parse(payload, path: snapshotPath, offset: offset)
            if index == 0 {
                guard json["kind"]?.stringValue == "snapshot", let seq = json["lsn"]?.intValue else {
                    throw Journal.Corruption(
                        path: snapshotPath, offset: 0, reason: "a snapshot starts with its header record")
                }
                snapshotSeq = seq
                continue
            }
            apply(try Self.decode(json, path: snapshotPath, offset: offset))
        }
        let (records, tornAt) = try Journal.read(path: journalPath)
        if let tornAt {
            Log.warning(
                "dropping a torn record at the end of the journal", [("file", journalPath), ("offset", tornAt)])
            try Journal.truncate(path: journalPath, to: tornAt)
        }
        seq = snapshotSeq
        offset = 0
        for payload in records {
            defer { offset += 8 + payload.count }
            let json = try Self.parse(payload, path: journalPath, offset: offset)
            guard let recordSeq = json["lsn"]?.intValue else {
                throw Journal.Corruption(path: journalPath, offset: offset, reason: "a record without \"lsn\"")
            }
            guard recordSeq > snapshotSeq else { continue }
            apply(try Self.decode(json, path: journalPath, offset: offset))
            seq = recordSeq
            recordsSinceSnapshot += 1
        }
        journal = try Journal(path: journalPath)
    }

    private static func parse(_ payload: [UInt8], path: String, offset: Int) throws -> JSONValue {
        do {
            return try JSONReader.parse(payload, maxDepth: 10_000)
        } catch {
            throw Journal.Corruption(path: path, offset: offset, reason: "a record is not JSON: \(error)")
        }
    }

    private static func decode(_ json: JSONValue, path: String, offset: Int) throws -> HubRecord {
        do {
            return try HubRecord(json: json)
        } catch {
            throw Journal.Corruption(path: path, offset: offset, reason: error.description)
        }
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

    var isSnapshotDue: Bool { recordsSinceSnapshot >= snapshotEvery && pending.isEmpty }

    /// Replaces the history with `records` (the whole state as of the last commit).
    func writeSnapshot(_ records: [HubRecord]) throws(SystemError) {
        var payloads = [JSONWriter.write(.object(["kind": .string("snapshot"), "lsn": .number(Double(seq))]))]
        payloads.reserveCapacity(records.count + 1)
        for record in records { payloads.append(JSONWriter.write(record.json)) }
        try FileBytes.writeAtomically(Journal.framed(payloads), to: snapshotPath)
        try journal.truncate()
        recordsSinceSnapshot = 0
    }
}
