/// Reads a journal file's bytes and tells a torn tail from corruption (DESIGN §9 "Durability";
/// the rule as operators read it is in docs/architecture.md "Durability").
///
/// Records are checked in file order; the first one that fails a check ends the reading:
/// - it is a **torn tail** (the write a crash cut short: dropped, the hub warns) when it extends
///   past the file's *written end*;
/// - anything else is **corruption** at that record's offset: the hub does not start.
///
/// A failed record extends over what its checks prove: its header alone when the header fails
/// (the file ends inside it, or its checksum does not match), header and payload otherwise. The
/// written end is the end of the file without its trailing zero bytes, which a power loss can
/// leave where the file grew but the data never reached the disk. So a torn tail is a suffix
/// shorter than the record it begins (zeros aside), and a complete record whose payload fails
/// its checksum is corruption — the last one too: it was whole on disk, it may have been
/// acknowledged, and dropping it would lose it silently.
///
/// Format 1 record headers have no checksum; the check is a length from 1 to `maxRecordBytes`. A
/// payload running past the end is torn only if no shorter prefix of what follows the header has
/// the record's CRC: one that has it proves the length field damaged, and the record then extends
/// over that prefix.
///
/// Invariant: a single damaged byte anywhere in a format 2 file (a file header byte, a record
/// header byte, a payload byte) is reported as corruption at the offset of the record holding it
/// (0 for the file header) — unless it turns the file's last bytes into zeros, which is exactly
/// what a power loss leaves and is read as a torn tail. `JournalTests` checks every position.
struct JournalReader {
    let bytes: [UInt8]
    let path: String
    /// The end of the file without its trailing zero bytes.
    let writtenEnd: Int

    init(bytes: [UInt8], path: String) {
        self.bytes = bytes
        self.path = path
        writtenEnd = bytes.lastIndex { $0 != 0 }.map { $0 + 1 } ?? 0
    }

    func read() throws(Journal.Corruption) -> Journal.Contents {
        let header = Journal.fileHeader
        if bytes.starts(with: header) { return try records(.checkedHeaders, from: header.count) }
        if writtenEnd < header.count && bytes[..<writtenEnd].elementsEqual(header[..<writtenEnd]) {
            // Empty, or the first append (which writes the file header) was cut short.
            return Journal.Contents(records: [], tornAt: bytes.isEmpty ? nil : 0, format: .checkedHeaders)
        }
        if hasCheckedHeader(at: header.count) {
            throw Journal.Corruption(
                path: path, offset: 0,
                reason: "the file header is not \(Journal.fileHeaderText) although format 2 records follow it: "
                    + "it is damaged, or a newer PushHub wrote it")
        }
        return try records(.uncheckedHeaders, from: 0)
    }

    private func records(_ format: Journal.Format, from start: Int) throws(Journal.Corruption) -> Journal.Contents {
        var records: [Journal.Record] = []
        var offset = start
        while offset < bytes.count {
            switch check(format, at: offset) {
            case .record(let payload):
                records.append(Journal.Record(offset: offset, payload: Array(bytes[payload])))
                offset = payload.upperBound
            case .failed(let extent, let reason):
                guard offset + extent > writtenEnd else {
                    throw Journal.Corruption(path: path, offset: offset, reason: reason)
                }
                return Journal.Contents(records: records, tornAt: offset, format: format)
            }
        }
        return Journal.Contents(records: records, tornAt: nil, format: format)
    }

    private enum Check {
        case record(payload: Range<Int>)
        /// `extent`: how many bytes from its offset the failed record provably spans.
        case failed(extent: Int, reason: String)
    }

    private func check(_ format: Journal.Format, at offset: Int) -> Check {
        let headerBytes = format.recordHeaderBytes
        guard bytes.count - offset >= headerBytes else {
            return .failed(extent: headerBytes, reason: "the file ends inside a record header")
        }
        let length = Int(Journal.littleEndian(bytes, at: offset))
        let checksum = Journal.littleEndian(bytes, at: offset + 4)
        let payloadStart = offset + headerBytes
        switch format {
        case .checkedHeaders:
            guard hasCheckedHeader(at: offset) else {
                return .failed(extent: headerBytes, reason: "the record header fails its checksum")
            }
        case .uncheckedHeaders:
            // PushHub never wrote an empty format 1 record (each is a JSON object): a length of 0 is
            // damage, or zeros a crash left (where the all-zero header would pass as an empty record).
            guard length > 0 && length <= Journal.maxRecordBytes else {
                return .failed(extent: headerBytes, reason: "record length \(length) is impossible")
            }
            if payloadStart + length > bytes.count,
                let prefix = CRC32.shortestPrefix(of: bytes[payloadStart...], withChecksum: checksum)
            {
                return .failed(
                    extent: headerBytes + prefix,
                    reason: "the length field says \(length) bytes, past the end of the file, but the first \(prefix) "
                        + "have the record's checksum: the length is damaged")
            }
        }
        guard payloadStart + length <= bytes.count else {
            return .failed(extent: headerBytes + length, reason: "the file ends inside the record")
        }
        let payload = payloadStart..<payloadStart + length
        guard CRC32.checksum(bytes[payload]) == checksum else {
            return .failed(extent: headerBytes + length, reason: "the record fails its checksum")
        }
        return .record(payload: payload)
    }

    /// Whether a complete format 2 record header whose checksum matches starts at `offset`.
    private func hasCheckedHeader(at offset: Int) -> Bool {
        bytes.count - offset >= Journal.Format.checkedHeaders.recordHeaderBytes
            && CRC32.checksum(bytes[offset..<offset + 8]) == Journal.littleEndian(bytes, at: offset + 8)
    }
}
