import Glibc

/// An append-only file of checksummed records; each append is one write and one fsync (DESIGN §9).
///
/// Record layout (little-endian):
/// ```
/// +----------------+----------------+---------------------------+
/// | length (u32)   | CRC-32 (u32)   | payload (length bytes)    |
/// +----------------+----------------+---------------------------+
/// ```
/// Invariant: after `append` returns, its records are on stable storage; `read` returns every
/// complete record and tells a torn tail (dropped) from corruption before the tail (fatal).
public final class Journal {
    public let path: String
    private var fd: Int32
    public private(set) var size: Int
    public static let maxRecordBytes = 64 << 20

    /// A bad record followed by more data: start-up stops, naming the file and byte offset.
    public struct Corruption: Error, CustomStringConvertible {
        public var path: String
        public var offset: Int
        public var reason: String
        public var description: String {
            "\(path) is corrupt at byte \(offset) (\(reason)); records after it cannot be trusted. "
                + "Restore the data dir from a backup, or move the file away to start without its records."
        }
    }

    /// Opens (creating) the journal for appending at its end.
    public init(path: String) throws(SystemError) {
        self.path = path
        fd = try blockingSystemCall("open \(path)") { open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600) }
        size = Int(lseek(fd, 0, SEEK_END))
    }

    deinit { close(fd) }

    /// Appends records and makes them durable with one fsync (group commit, DESIGN §9). On a
    /// failure the file is cut back to where it was, so a later append follows the last good record.
    public func append(_ payloads: [[UInt8]]) throws(SystemError) {
        let bytes = Self.framed(payloads)
        do {
            try FileBytes.writeAll(bytes, to: fd, path: path)
            try blockingSystemCall("fsync \(path)") { fsync(fd) }
        } catch {
            _ = ftruncate(fd, off_t(size))  // best effort: the caller reports the write as failed
            throw error
        }
        size += bytes.count
    }

    /// Empties the journal (after a snapshot made its records redundant).
    public func truncate() throws(SystemError) {
        try blockingSystemCall("ftruncate \(path)") { ftruncate(fd, 0) }
        try blockingSystemCall("fsync \(path)") { fsync(fd) }
        size = 0
    }

    /// The records as they are laid out in a file (the layout above, one after another).
    static func framed(_ payloads: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(payloads.reduce(0) { $0 + 8 + $1.count })
        for payload in payloads {
            appendLittleEndian(UInt32(payload.count), to: &bytes)
            appendLittleEndian(CRC32.checksum(payload), to: &bytes)
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

    /// Reads every record of the file at `path`.
    /// - Returns: the payloads, and the offset of a torn tail that was dropped (if any).
    /// - Throws: `Corruption` when a bad record is followed by more data.
    public static func read(path: String) throws -> (records: [[UInt8]], tornAt: Int?) {
        guard let bytes = try FileBytes.read(path) else { return ([], nil) }
        var records: [[UInt8]] = []
        var offset = 0
        while offset < bytes.count {
            let remaining = bytes.count - offset
            guard remaining >= 8 else { return (records, offset) }  // torn header
            let length = Int(littleEndian(bytes, at: offset))
            let checksum = littleEndian(bytes, at: offset + 4)
            if length > maxRecordBytes {
                if isZeroTail(bytes, from: offset) { return (records, offset) }
                throw Corruption(path: path, offset: offset, reason: "record length \(length) is impossible")
            }
            guard remaining >= 8 + length else { return (records, offset) }  // torn payload
            let payload = Array(bytes[(offset + 8)..<(offset + 8 + length)])
            guard CRC32.checksum(payload) == checksum else {
                if offset + 8 + length == bytes.count || isZeroTail(bytes, from: offset) { return (records, offset) }
                throw Corruption(path: path, offset: offset, reason: "checksum mismatch")
            }
            records.append(payload)
            offset += 8 + length
        }
        return (records, nil)
    }

    /// A crash can leave zeros where a record was being written.
    static func isZeroTail(_ bytes: [UInt8], from offset: Int) -> Bool { bytes[offset...].allSatisfy { $0 == 0 } }

    /// Cuts a torn tail off the file so that new records follow the last good one.
    public static func truncate(path: String, to offset: Int) throws(SystemError) {
        try blockingSystemCall("truncate \(path)") { Glibc.truncate(path, off_t(offset)) }
    }
}

/// Whole-file reads and atomic whole-file writes (write a temporary, fsync, rename, fsync dir).
public enum FileBytes {
    public static func read(_ path: String) throws(SystemError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw SystemError(call: "open \(path)", errno: errno)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = try blockingSystemCall("read \(path)") {
                chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            }
            if n == 0 { return bytes }
            bytes += chunk[0..<n]
        }
    }

    /// Writes every byte to `fd` (retrying short writes); `path` names it in errors.
    static func writeAll(_ bytes: [UInt8], to fd: Int32, path: String) throws(SystemError) {
        var written = 0
        while written < bytes.count {
            let n = try blockingSystemCall("write \(path)") {
                bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            }
            written += n
        }
    }

    public static func writeAtomically(_ bytes: [UInt8], to path: String) throws(SystemError) {
        let temporary = path + ".tmp"
        let fd = try blockingSystemCall("open \(temporary)") {
            open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        }
        defer { close(fd) }
        try writeAll(bytes, to: fd, path: temporary)
        try blockingSystemCall("fsync \(temporary)") { fsync(fd) }
        try blockingSystemCall("rename \(temporary)") { rename(temporary, path) }
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let dirFD = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 {
            _ = fsync(dirFD)
            close(dirFD)
        }
    }
}
