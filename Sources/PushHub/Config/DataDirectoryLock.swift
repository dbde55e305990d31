import Glibc

/// One hub per data dir (DESIGN §9 "Durability"): an exclusive `flock` on `hub.lock`, held for
/// the life of the process (the kernel drops it when the process dies, `kill -9` included), with
/// the holder's pid written in the file so that a second start can name it.
///
/// Invariant: while an instance exists, no other open file description holds the lock.
public final class DataDirectoryLock: Sendable {
    public let path: String
    private let fd: Int32

    /// Takes the lock or throws `DataDirectoryError.locked` naming the holder's pid.
    public init(directory: String) throws(DataDirectoryError) {
        path = directory + "/hub.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .cannotWrite(path, errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = Self.readPID(fd)
            close(fd)
            if code == EWOULDBLOCK { throw .locked(path, holder: holder) }
            throw .cannotWrite(path, code)
        }
        let line = Array("\(getpid())\n".utf8)
        guard ftruncate(fd, 0) == 0, line.withUnsafeBytes({ pwrite(fd, $0.baseAddress, $0.count, 0) }) == line.count else {
            let code = errno
            close(fd)
            throw .cannotWrite(path, code)
        }
        self.fd = fd
    }

    deinit { close(fd) }

    private static func readPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count], as: UTF8.self).trimmingWhitespace())
    }
}
