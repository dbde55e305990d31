import Foundation
import Testing

@testable import PushHub

/// `StateJournal.restore`: what a start does with the data dir's files (DESIGN §9 "Durability").
@Suite struct StateJournalTests {
    static func directory() throws -> String {
        let directory = NSTemporaryDirectory() + "pushhub-state-journal-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The state `restore` rebuilds from `directory`, as the records that would snapshot it.
    static func restored(_ directory: String) throws -> (state: [JSONValue], journal: StateJournal) {
        var state = HubState(keepVersions: 4)
        let journal = try StateJournal(directory: directory)
        try journal.restore { state.apply($0) }
        return (state.snapshotRecords().map(\.json), journal)
    }

    static func state(of records: [HubRecord]) -> [JSONValue] {
        var state = HubState(keepVersions: 4)
        for record in records { state.apply(record) }
        return state.snapshotRecords().map(\.json)
    }

    @Test("a data dir written in format 1 opens with every record, and both files are rewritten in format 2")
    func formatOneDataDirectory() throws {
        let directory = try Self.directory()
        let records = try EveryRecordKind.records()
        let payloads = try EveryRecordKind.payloads()
        // Snapshot as of lsn 7 (the first 7 records), the journal with lsn 8 on: both in format 1.
        let header = JSONWriter.write(.object(["kind": .string("snapshot"), "lsn": .number(7)]))
        let snapshot = JournalSample.format1([header] + records[..<7].map { JSONWriter.write($0.json) })
        let journal = JournalSample.format1(Array(payloads[7...]))
        try FileBytes.writeAtomically(snapshot.bytes, to: directory + "/state.snapshot")
        try FileBytes.writeAtomically(journal.bytes, to: directory + "/state.journal")

        let expected = Self.state(of: records)
        let first = try Self.restored(directory)
        #expect(first.state == expected)
        let rewrittenJournal = try #require(try Journal.read(path: directory + "/state.journal"))
        #expect(rewrittenJournal.format == .checkedHeaders && rewrittenJournal.tornAt == nil)
        #expect(rewrittenJournal.records.map(\.payload) == Array(payloads[7...]))
        let rewrittenSnapshot = try #require(try Snapshot.read(path: directory + "/state.snapshot"))
        #expect(rewrittenSnapshot.format == .checkedHeaders && rewrittenSnapshot.lsn == 7)

        // The next commit is appended in format 2 and read back with the rest.
        let token = AdminToken(name: "later", scopes: [.read], digest: "cd", createdAt: 9)
        first.journal.append(.adminTokenCreated(token))
        #expect(try first.journal.commit() == 1)
        #expect(try Self.restored(directory).state == Self.state(of: records + [.adminTokenCreated(token)]))
    }

    @Test("a damaged file stops the restore, naming it and the offset, and the data dir stays as it was")
    func damageChangesNothing() throws {
        let directory = try Self.directory()
        do {
            let (_, journal) = try Self.restored(directory)
            for record in try EveryRecordKind.records() { journal.append(record) }
            _ = try journal.commit()
            try journal.writeSnapshot(Array(try EveryRecordKind.records()[..<3]))
            for record in try EveryRecordKind.records()[3...] { journal.append(record) }
            _ = try journal.commit()
        }
        let journalPath = directory + "/state.journal"
        let snapshotPath = directory + "/state.snapshot"
        let intact = (
            journal: try #require(try FileBytes.read(journalPath)),
            snapshot: try #require(try FileBytes.read(snapshotPath))
        )
        let middle = try #require(try Journal.read(path: journalPath)).records[5].offset

        var journal = intact.journal
        journal[middle + 2] ^= 0xFF  // the third byte of a middle record's length (issue #24)
        try FileBytes.writeAtomically(journal, to: journalPath)
        let error = try #require(throws: Journal.Corruption.self) { try Self.restored(directory) }
        #expect(error.path == journalPath && error.offset == middle)
        #expect(error.description.hasPrefix("\(journalPath) is corrupt at byte \(middle) ("))
        #expect(try FileBytes.read(journalPath) == journal && FileBytes.read(snapshotPath) == intact.snapshot)

        var snapshot = intact.snapshot
        snapshot[snapshot.count - 1] ^= 0x01
        try FileBytes.writeAtomically(intact.journal, to: journalPath)
        try FileBytes.writeAtomically(snapshot, to: snapshotPath)
        let snapshotError = try #require(throws: Journal.Corruption.self) { try Self.restored(directory) }
        #expect(snapshotError.path == snapshotPath)
        #expect(try FileBytes.read(journalPath) == intact.journal && FileBytes.read(snapshotPath) == snapshot)
    }
}
