import Glibc

/// A system call the OS refused, naming the call and the errno.
///
/// Invariant: never EINTR (retried) or EAGAIN (`IOResult.wouldBlock`).
public struct SystemError: Error, CustomStringConvertible, Sendable {
    public var call: String
    public var errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String { "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))" }
}
