import Foundation
import Testing

@testable import PushHub

/// `Journal`'s layout and `JournalReader`'s rule: one allowed outcome for every damaged byte and
/// every cut (STYLE §9, DESIGN §9 "Durability"): a torn tail is dropped with the records before it
/// intact; anything else is refused, naming the file and the damaged record's offset.
@Suite struct JournalTests {
    static let path = "/var/lib/pushhub/state.journal"

    enum Outcome: Equatable, CustomStringConvertible {
        case read(records: Int, tornAt: Int?)
        case refused(path: String, offset: Int)

        var description: String {
            switch self {
            case .read(let records, let tornAt): "read \(records) records, torn at \(tornAt.map(String.init) ?? "-")"
            case .refused(let path, let offset): "refused: \(path) at \(offset)"
            }
        }
    }

    /// What the reader makes of `bytes`; a read also checks that the records are `sample`'s first ones, unchanged.
    static func outcome(_ bytes: [UInt8], _ sample: JournalSample) -> Outcome {
        do {
            let contents = try Journal.read(bytes, path: path)
            let payloads = contents.records.map(\.payload)
            guard payloads == Array(sample.payloads.prefix(payloads.count)),
                contents.records.map(\.offset) == sample.spans.prefix(payloads.count).map(\.lowerBound)
            else { return .read(records: -1, tornAt: contents.tornAt) }  // records that were never written
            return .read(records: payloads.count, tornAt: contents.tornAt)
        } catch {
            return .refused(path: error.path, offset: error.offset)
        }
    }

    static func sample(format: Int) throws -> JournalSample {
        let payloads = try EveryRecordKind.payloads()
        return format == 2 ? try JournalSample.format2(payloads) : JournalSample.format1(payloads)
    }

    @Test("the samples hold one record of every kind")
    func everyKind() throws {
        let kinds = Set(try EveryRecordKind.records().map(EveryRecordKind.kind))
        #expect(kinds.count == EveryRecordKind.kindCount)
    }

    @Test("format 2 is the documented layout: file header, then length, CRC-32, header CRC-32, payload")
    func layout() throws {
        let payload = Array(#"{"a":1}"#.utf8)
        let sample = try JournalSample.format2([payload])
        func littleEndian(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
        let lengthAndChecksum = littleEndian(7) + littleEndian(CRC32.checksum(payload))
        let expected =
            Array("PHJRNL".utf8) + [0x02, 0x0A]  // file header: "PHJRNL", format 2, "\n"
            + lengthAndChecksum  // length 7, CRC-32 of the payload
            + littleEndian(CRC32.checksum(lengthAndChecksum))  // CRC-32 of the 8 bytes before it
            + payload
        #expect(sample.bytes == expected)
        #expect(CRC32.checksum("123456789".utf8) == 0xCBF4_3926)  // the CRC-32 check value (zlib, PNG)
    }

    @Test("a journal reads back every record, with its offset, in both formats", arguments: [1, 2])
    func readsBack(format: Int) throws {
        let sample = try Self.sample(format: format)
        let contents = try Journal.read(sample.bytes, path: Self.path)
        #expect(contents.records.map(\.payload) == sample.payloads)
        #expect(contents.records.map(\.offset) == sample.spans.map(\.lowerBound))
        #expect(contents.tornAt == nil && contents.format.rawValue == format)
    }

    @Test(
        "every byte of a journal, flipped, is refused naming the file and the offset of its record", arguments: [1, 2])
    func everyFlippedByte(format: Int) throws {
        let sample = try Self.sample(format: format)
        var wrong: [String] = []
        for position in sample.bytes.indices {
            for mask: UInt8 in [0xFF, 0x01, 0x80] {
                var damaged = sample.bytes
                damaged[position] ^= mask
                let expected = Outcome.refused(path: Self.path, offset: sample.recordStart(holding: position))
                let outcome = Self.outcome(damaged, sample)
                if outcome != expected { wrong.append("byte \(position) ^ \(mask): \(outcome), expected \(expected)") }
            }
        }
        #expect(
            wrong.isEmpty, "\(wrong.count) of \(sample.bytes.count * 3) damaged journals, first: \(wrong.prefix(8))")
    }

    @Test(
        "a journal cut at any offset keeps every record before the cut; a partial record is a torn tail",
        arguments: [1, 2])
    func everyCut(format: Int) throws {
        let sample = try Self.sample(format: format)
        var wrong: [String] = []
        for end in 0...sample.bytes.count {
            let kept = sample.payloads(before: end).count
            let expected = Outcome.read(
                records: kept, tornAt: sample.boundaries.contains(end) ? nil : sample.recordStart(holding: end))
            let outcome = Self.outcome(Array(sample.bytes[..<end]), sample)
            if outcome != expected { wrong.append("cut at \(end): \(outcome), expected \(expected)") }
        }
        #expect(wrong.isEmpty, "\(wrong.count) wrong, first: \(wrong.prefix(8))")
    }

    @Test("zeros from any offset to the end, as a power loss leaves them, are a torn tail", arguments: [1, 2])
    func everyZeroedTail(format: Int) throws {
        let sample = try Self.sample(format: format)
        var wrong: [String] = []
        for start in 0..<sample.bytes.count {
            let zeroed = Array(sample.bytes[..<start]) + [UInt8](repeating: 0, count: sample.bytes.count - start)
            let expected = Outcome.read(
                records: sample.payloads(before: start).count,
                tornAt: sample.boundaries.contains(start) && start >= sample.firstRecord
                    ? start : sample.recordStart(holding: start))
            let outcome = Self.outcome(zeroed, sample)
            if outcome != expected { wrong.append("zeros from \(start): \(outcome), expected \(expected)") }
        }
        #expect(wrong.isEmpty, "\(wrong.count) wrong, first: \(wrong.prefix(8))")
    }

    @Test("a last record that is whole but fails its checksum is refused, not dropped as torn", arguments: [1, 2])
    func wholeLastRecordWithABadChecksum(format: Int) throws {
        let sample = try Self.sample(format: format)
        var damaged = sample.bytes
        damaged[damaged.count - 1] = UInt8(ascii: "]")  // the closing brace of the last record's JSON
        let error = try #require(throws: Journal.Corruption.self) { try Journal.read(damaged, path: Self.path) }
        #expect(error.offset == sample.spans.last?.lowerBound)
        #expect(error.description.hasPrefix("\(Self.path) is corrupt at byte \(error.offset) ("))
    }

    @Test("a format 1 length damaged to run past the end is refused: a shorter prefix has the record's checksum")
    func formatOneLengthPastTheEnd() throws {
        let sample = try Self.sample(format: 1)
        let middle = sample.spans[sample.spans.count / 2]
        var damaged = sample.bytes
        damaged[middle.lowerBound + 2] ^= 0xFF  // length + ~16 MiB: under the format's limit, past the end
        let error = try #require(throws: Journal.Corruption.self) { try Journal.read(damaged, path: Self.path) }
        #expect(error.offset == middle.lowerBound)
        #expect(error.reason.contains("the length is damaged"))
    }

    @Test("a damaged file header is refused at byte 0; a file header cut short is torn at 0")
    func fileHeader() throws {
        let sample = try Self.sample(format: 2)
        var damaged = sample.bytes
        damaged[6] = 3  // a format number this hub does not know
        let error = try #require(throws: Journal.Corruption.self) { try Journal.read(damaged, path: Self.path) }
        #expect(error.offset == 0 && error.reason.contains("file header"))
        #expect(try Journal.read(Array(sample.bytes[..<5]), path: Self.path).tornAt == 0)
        #expect(
            try Journal.read([], path: Self.path) == Journal.Contents(records: [], tornAt: nil, format: .checkedHeaders)
        )
    }

    @Test("an emptied journal gets its file header again with the next append")
    func appendAfterTruncate() throws {
        let path = NSTemporaryDirectory() + "pushhub-journal-\(UUID().uuidString)"
        defer { unlink(path) }
        let journal = try Journal(path: path)
        try journal.append([Array("1".utf8)])
        try journal.truncate()
        try journal.append([Array("2".utf8)])
        try journal.append([Array("3".utf8)])
        let contents = try #require(try Journal.read(path: path))
        #expect(contents.records.map(\.payload) == [Array("2".utf8), Array("3".utf8)])
        #expect(contents.records.first?.offset == 8 && contents.format == .checkedHeaders)
    }

    @Test("the shortest prefix with a checksum is found in one pass")
    func shortestPrefix() {
        let bytes = Array("123456789abc".utf8)
        #expect(CRC32.shortestPrefix(of: bytes, withChecksum: 0xCBF4_3926) == 9)
        #expect(CRC32.shortestPrefix(of: bytes, withChecksum: CRC32.checksum(bytes)) == 12)
        #expect(CRC32.shortestPrefix(of: bytes, withChecksum: 0) == nil)
    }
}
