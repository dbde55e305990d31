import Glibc

/// An append-only file of checksummed records; each append is one write and one fsync (DESIGN §9).
/// The bytes are laid out as `Journal.Format` draws them; `Journal.read` recovers them.
///
/// Invariants: after `append` returns, its records are on stable storage; a file this type
/// creates or appends to is in format 2 (`Format.checkedHeaders`): its first append writes the
/// file header. A format 1 file is rewritten before anything is appended to it (`StateJournal`).
public final class Journal {
    public let path: String
    private var fd: Int32
    public private(set) var size: Int
    /// The most a format 1 record can hold: a longer length field is damage (that format's only header check).
    public static let maxRecordBytes = 64 << 20

    /// A damaged file: start-up stops, naming the file and the byte offset of the damaged record.
    public struct Corruption: Error, CustomStringConvertible {
        public var path: String
        public var offset: Int
        public var reason: String
        public var description: String {
            "\(path) is corrupt at byte \(offset) (\(reason)); the hub does not start on a damaged file. "
                + "Restore the data dir from a backup, or see docs/operations.md \"A damaged data dir\"."
        }
    }

    /// One complete record and the byte offset of its header in the file.
    public struct Record: Equatable, Sendable {
        public var offset: Int
        public var payload: [UInt8]
    }

    /// What a journal file holds.
    public struct Contents: Equatable, Sendable {
        /// Every complete record before the end or the torn tail, in file order.
        public var records: [Record]
        /// Where a torn tail begins (the bytes from there on are dropped), or nil.
        public var tornAt: Int?
        public var format: Format
    }

    /// Opens (creating) the journal for appending at its end.
    public init(path: String) throws(SystemError) {
        self.path = path
        fd = try blockingSystemCall("open \(path)") { open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600) }
        size = Int(lseek(fd, 0, SEEK_END))
    }

    deinit { close(fd) }

    /// Appends records and makes them durable with one fsync (group commit, DESIGN §9); an empty
    /// file gets the file header in the same write. On a failure the file is cut back to where it
    /// was, so a later append follows the last good record.
    public func append(_ payloads: [[UInt8]]) throws(SystemError) {
        let bytes = size == 0 ? Self.file(payloads) : Self.framed(payloads)
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

    /// Reads the file at `path` (nil when there is none); see `read(_:path:)`.
    public static func read(path: String) throws -> Contents? {
        guard let bytes = try FileBytes.read(path) else { return nil }
        return try read(bytes, path: path)
    }

    /// The records of a journal file's `bytes`, in either format, and where a torn tail begins.
    /// - Throws: `Corruption` naming `path` and the damaged record's offset for anything that is
    ///   not a torn tail (`JournalReader` states the rule).
    public static func read(_ bytes: [UInt8], path: String) throws(Corruption) -> Contents {
        try JournalReader(bytes: bytes, path: path).read()
    }

    /// Cuts a torn tail off the file so that new records follow the last good one.
    public static func truncate(path: String, to offset: Int) throws(SystemError) {
        try blockingSystemCall("truncate \(path)") { Glibc.truncate(path, off_t(offset)) }
    }
}

/// Whole-file reads and atomic whole-file writes (write a temporary, fsync, rename, fsync dir),
/// and the directories they go in.
public enum FileBytes {
    /// Creates `path` and every missing parent, as `mkdir -p` does (modes 0777 less the umask);
    /// a directory that exists already is fine, anything else there is an error.
    public static func makeDirectories(_ path: String) throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o777) == 0 { continue }
            // Whatever mkdir said (EEXIST; EROFS or EACCES for a parent that exists under a
            // read-only or foreign tree), a directory already there is what was wanted.
            let failure = errno
            var status = stat()
            guard stat(prefix, &status) == 0 else { throw SystemError(call: "mkdir \(prefix)", errno: failure) }
            guard status.st_mode & S_IFMT == S_IFDIR else {
                throw SystemError(call: "mkdir \(prefix) (not a directory)", errno: ENOTDIR)
            }
        }
    }

    /// The whole file (nil: there is none), read until end of file in `chunkSize` reads: procfs
    /// files, whose size says 0, read whole too.
    public static func read(_ path: String, chunkSize: Int = 1 << 20) throws(SystemError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw SystemError(call: "open \(path)", errno: errno)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: chunkSize)
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
