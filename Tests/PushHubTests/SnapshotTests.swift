import Foundation
import Testing

@testable import PushHub

/// `Snapshot`: a file written whole has no torn tail, so every damaged byte and every cut is
/// refused, naming the file and the offset (STYLE §9, DESIGN §9 "Durability").
@Suite struct SnapshotTests {
    static let path = "/var/lib/pushhub/state.snapshot"

    /// A snapshot of one record of every kind, and where its records lie.
    static func sample() throws -> JournalSample {
        let bytes = Snapshot.bytes(lsn: 20, records: try EveryRecordKind.records())
        let payloads = try Journal.read(bytes, path: path).records.map(\.payload)
        return JournalSample(bytes: bytes, payloads: payloads, fileHeaderBytes: 8, recordHeaderBytes: 12)
    }

    /// The offset `Snapshot` names for `bytes`, or nil when it reads them.
    static func refusedAt(_ bytes: [UInt8]) -> Int? {
        do {
            _ = try Snapshot(bytes: bytes, path: path)
            return nil
        } catch {
            precondition(error.path == path, "the error names the snapshot")
            return error.offset
        }
    }

    @Test("a snapshot reads back its sequence number and every record")
    func readsBack() throws {
        let records = try EveryRecordKind.records()
        let snapshot = try Snapshot(bytes: try Self.sample().bytes, path: Self.path)
        #expect(snapshot.lsn == 20 && snapshot.format == .checkedHeaders)
        #expect(snapshot.records.map(\.json) == records.map(\.json))
    }

    @Test("every byte of a snapshot, flipped, is refused naming the file and the offset of its record")
    func everyFlippedByte() throws {
        let sample = try Self.sample()
        var wrong: [String] = []
        for position in sample.bytes.indices {
            for mask: UInt8 in [0xFF, 0x01, 0x80] {
                var damaged = sample.bytes
                damaged[position] ^= mask
                let offset = Self.refusedAt(damaged)
                let expected = sample.recordStart(holding: position)
                if offset != expected {
                    wrong.append(
                        "byte \(position) ^ \(mask): \(offset.map(String.init) ?? "read"), expected \(expected)")
                }
            }
        }
        #expect(
            wrong.isEmpty, "\(wrong.count) of \(sample.bytes.count * 3) damaged snapshots, first: \(wrong.prefix(8))")
    }

    @Test("a snapshot cut at any offset is refused, at the record cut or where the missing ones begin")
    func everyCut() throws {
        let sample = try Self.sample()
        var wrong: [String] = []
        for end in 0..<sample.bytes.count {
            let offset = Self.refusedAt(Array(sample.bytes[..<end]))
            let expected = sample.boundaries.contains(end) ? end : sample.recordStart(holding: end)
            if offset != expected {
                wrong.append("cut at \(end): \(offset.map(String.init) ?? "read"), expected \(expected)")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) wrong, first: \(wrong.prefix(8))")
    }

    @Test("a snapshot whose end became zeros is refused at the first record the zeros reach")
    func everyZeroedTail() throws {
        let sample = try Self.sample()
        var wrong: [String] = []
        for start in 0..<sample.bytes.count {
            let zeroed = Array(sample.bytes[..<start]) + [UInt8](repeating: 0, count: sample.bytes.count - start)
            let offset = Self.refusedAt(zeroed)
            let expected =
                sample.boundaries.contains(start) && start >= sample.firstRecord
                ? start : sample.recordStart(holding: start)
            if offset != expected {
                wrong.append("zeros from \(start): \(offset.map(String.init) ?? "read"), expected \(expected)")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) wrong, first: \(wrong.prefix(8))")
    }

    @Test("the header's record count is required in format 2 and holds in both directions")
    func recordCount() throws {
        let records = try EveryRecordKind.records()
        func header(_ members: JSONObject) -> [UInt8] { JSONWriter.write(.object(members)) }
        let payloads = records.map { JSONWriter.write($0.json) }
        let uncounted = Journal.file([header(["kind": .string("snapshot"), "lsn": .number(3)])] + payloads)
        #expect(Self.refusedAt(uncounted) == 8)
        let overfull = Journal.file(
            [header(["kind": .string("snapshot"), "lsn": .number(3), "records": .number(2)])] + payloads)
        let spans = try Journal.read(overfull, path: Self.path).records.map(\.offset)
        #expect(Self.refusedAt(overfull) == spans[3])  // the first record past the two announced
        let negative = Journal.file(
            [header(["kind": .string("snapshot"), "lsn": .number(3), "records": .number(-1)])] + payloads)
        #expect(Self.refusedAt(negative) == 8)  // the header record
    }

    @Test("a format 1 snapshot (no file header, no record count) is read")
    func formatOne() throws {
        let records = try EveryRecordKind.records()
        let header = JSONWriter.write(.object(["kind": .string("snapshot"), "lsn": .number(3)]))
        let sample = JournalSample.format1([header] + records.map { JSONWriter.write($0.json) })
        let snapshot = try Snapshot(bytes: sample.bytes, path: Self.path)
        #expect(snapshot.lsn == 3 && snapshot.format == .uncheckedHeaders)
        #expect(snapshot.records.map(\.json) == records.map(\.json))
    }
}
