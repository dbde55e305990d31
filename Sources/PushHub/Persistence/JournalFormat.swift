extension Journal {
    /// How a journal file (`state.journal`, `state.snapshot`) lays out its records
    /// (docs/architecture.md "Durability"). Integers are little-endian.
    ///
    /// Format 2, written since issue #24: a file header, then records whose header checks itself.
    /// ```
    /// file:   +----------------------------------------+----------+----------+-----
    ///         | file header (8): "PHJRNL" 0x02 "\n"    | record   | record   | …
    ///         +----------------------------------------+----------+----------+-----
    /// record: +--------------+----------------+-------------------+------------------------+
    ///         | length (u32) | CRC-32 (u32)   | header CRC-32     | payload (length bytes) |
    ///         |              | of the payload | (u32) of the 8    |                        |
    ///         |              |                | bytes before it   |                        |
    ///         +--------------+----------------+-------------------+------------------------+
    /// ```
    /// Format 1, PushHub before it (read, never written): no file header; a record is length
    /// (u32), CRC-32 of the payload (u32), payload. Its length field has no check of its own.
    ///
    /// Invariants: a file starts with the format 2 file header or is in format 1; a format 2 record
    /// whose header checksum matches has the length it was written with. Every byte of a format 2
    /// file is covered by a check: the file header is a constant, each record header by its CRC,
    /// each payload by the CRC in its header.
    public enum Format: Int, Sendable {
        case uncheckedHeaders = 1
        case checkedHeaders = 2

        /// The bytes before a record's payload.
        var recordHeaderBytes: Int {
            switch self {
            case .uncheckedHeaders: 8
            case .checkedHeaders: 12
            }
        }
    }

    /// The first 8 bytes of a format 2 file. None is zero, so it is never taken for zeros a crash
    /// left; read as a format 1 length its first four are more than `maxRecordBytes`, so no
    /// format 1 file starts with it.
    static let fileHeader: [UInt8] = Array("PHJRNL".utf8) + [2, UInt8(ascii: "\n")]
    static let fileHeaderText = #""PHJRNL" 0x02 "\n""#

    /// A whole format 2 file holding `payloads` (a snapshot, a rewritten journal).
    static func file(_ payloads: [[UInt8]]) -> [UInt8] { fileHeader + framed(payloads) }

    /// Format 2 records, one after another (what an append adds to a file that has its header).
    static func framed(_ payloads: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(payloads.reduce(0) { $0 + Format.checkedHeaders.recordHeaderBytes + $1.count })
        for payload in payloads {
            let header = bytes.count
            appendLittleEndian(UInt32(payload.count), to: &bytes)
            appendLittleEndian(CRC32.checksum(payload), to: &bytes)
            appendLittleEndian(CRC32.checksum(bytes[header..<header + 8]), to: &bytes)
            bytes += payload
        }
        return bytes
    }

    static func appendLittleEndian(_ value: UInt32, to out: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }

    static func littleEndian(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << UInt32(8 * $1) }
    }
}
