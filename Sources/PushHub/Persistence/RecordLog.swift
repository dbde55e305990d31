import Foundation
import Synchronization

/// A store's durable history: `NAME.snapshot.json` (the whole state as of a sequence number) and
/// `NAME.journal` (the records after it), for stores whose records are JSON objects.
///
/// Invariants: every appended record gets the next `seq` and is fsynced before `append`
/// returns; every `snapshotEvery` records the owner's snapshot replaces the journal; restoring
/// applies the snapshot and then only records with a greater `seq`.
public final class RecordLog: Sendable {
    let snapshotPath: String
    let journalPath: String
    let snapshotEvery: Int
    struct State {
        var journal: Journal?
        var seq = 0
        var recordsSinceSnapshot = 0
    }
    private let state: Mutex<State>

    /// A snapshot file that cannot be read: start-up stops and says so.
    public struct FormatError: Error, CustomStringConvertible {
        public var description: String
    }

    public init(directory: String, name: String, snapshotEvery: Int = 1000) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        snapshotPath = directory + "/\(name).snapshot.json"
        journalPath = directory + "/\(name).journal"
        self.snapshotEvery = snapshotEvery
        let path = journalPath
        state = Mutex(State(journal: try Journal(path: path)))
    }

    /// Feeds the snapshot's state, then each newer record, to the owner.
    public func restore(snapshot: (JSONValue) -> Void, record: (JSONValue) -> Void) throws {
        var snapshotSeq = 0
        if let bytes = try FileBytes.read(snapshotPath) {
            guard let json = try? JSONReader.parse(bytes, maxDepth: 10_000), let seq = json["seq"]?.intValue,
                let state = json["state"]
            else {
                throw RecordLog.FormatError(
                    description: "\(snapshotPath) is not a snapshot; restore it from a backup or remove it")
            }
            snapshot(state)
            snapshotSeq = seq
        }
        let (records, tornAt) = try Journal.read(path: journalPath)
        if let tornAt {
            Log.warning(
                "dropping a torn record at the end of the journal", [("file", journalPath), ("offset", tornAt)])
            try Journal.truncate(path: journalPath, to: tornAt)
        }
        var seq = snapshotSeq
        var offset = 0
        for payload in records {
            defer { offset += 8 + payload.count }
            guard let json = try? JSONReader.parse(payload, maxDepth: 10_000), let recordSeq = json["seq"]?.intValue
            else {
                throw Journal.Corruption(
                    path: journalPath, offset: offset, reason: "a record with a valid checksum is not a state record")
            }
            if recordSeq > snapshotSeq {
                record(json)
                seq = recordSeq
            }
        }
        let path = journalPath
        try state.withLock { state in
            state.journal = nil
            state.journal = try Journal(path: path)
            state.seq = seq
        }
    }

    /// Journals `record` (with the next `seq`); every `snapshotEvery` records, writes
    /// `snapshotAfter()` — the state including this record — and empties the journal.
    public func append(_ record: JSONValue, snapshotAfter: () -> JSONValue) throws {
        try state.withLock { state in
            var members = record.objectValue ?? JSONObject()
            members["seq"] = .number(Double(state.seq + 1))
            try state.journal!.append(JSONWriter.write(.object(members)))
            state.seq += 1
            state.recordsSinceSnapshot += 1
            if state.recordsSinceSnapshot >= snapshotEvery {
                let snapshot = JSONValue.object(["seq": .number(Double(state.seq)), "state": snapshotAfter()])
                try FileBytes.writeAtomically(JSONWriter.write(snapshot), to: snapshotPath)
                try state.journal!.truncate()
                state.recordsSinceSnapshot = 0
            }
        }
    }
}

@available(*, unavailable)
extension RecordLog.State: Sendable {}
