import CLinux
import Glibc

/// A non-blocking stream socket. The connection (in its `ByteStream`) or `Listener` that holds it
/// is its only owner and the only one to close it.
///
/// Invariant: `fd` is -1 once closed; every call on a closed socket is a bug (precondition).
public struct Socket: Sendable {
    public private(set) var fd: Int32

    public init(fd: Int32) { self.fd = fd }

    public var isOpen: Bool { fd >= 0 }

    /// Starts a non-blocking TCP connect to `remote` (TCP_NODELAY set). The socket becomes
    /// writable when the connect is done; `connectResult()` then says how it went.
    /// - Returns: the socket, and whether it connected at once (loopback can).
    public static func connecting(to remote: ResolvedAddress) throws(SystemError) -> (socket: Socket, connected: Bool) {
        let fd = Glibc.socket(
            remote.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError(call: "socket", errno: errno) }
        var on: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        var storage = remote.storage
        let status = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, remote.length) }
        }
        if status == 0 { return (Socket(fd: fd), true) }
        let error = errno
        guard error == EINPROGRESS || error == EINTR else {
            Glibc.close(fd)
            throw SystemError(call: "connect", errno: error)
        }
        return (Socket(fd: fd), false)
    }

    /// After a non-blocking connect reported writable: nil when connected, else why not.
    public func connectResult() -> SystemError? {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else {
            return SystemError(call: "getsockopt(SO_ERROR)", errno: errno)
        }
        return error == 0 ? nil : SystemError(call: "connect", errno: error)
    }

    /// The peer's IPv4 address in host order (nil: not IPv4, or the peer is gone).
    public var peerIPv4: UInt32? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let status = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard status == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
        return UInt32(bigEndian: address.sin_addr.s_addr)
    }

    /// Reads into `buffer`. `.processed(0)` is end of stream.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        precondition(fd >= 0, "read on a closed socket")
        return try systemCall("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// The next byte to read, left in the socket; `.processed(nil)` is end of stream.
    public func peekByte() throws(SystemError) -> IOResult<UInt8?> {
        precondition(fd >= 0, "peek on a closed socket")
        var byte: UInt8 = 0
        return switch try systemCall("recv", { Glibc.recv(fd, &byte, 1, Int32(MSG_PEEK)) }) {
        case .wouldBlock: .wouldBlock
        case .processed(let count): .processed(count == 0 ? nil : byte)
        }
    }

    /// Writes what `iovecs` point at, in order: `writev` through `sendmsg`, so that a peer that
    /// went away is an EPIPE for this connection rather than a SIGPIPE for the process.
    public func writev(_ iovecs: UnsafeBufferPointer<iovec>) throws(SystemError) -> IOResult<Int> {
        precondition(fd >= 0, "writev on a closed socket")
        var message = msghdr()
        message.msg_iov = UnsafeMutablePointer(mutating: iovecs.baseAddress)
        message.msg_iovlen = iovecs.count
        return try systemCall("sendmsg") { Glibc.sendmsg(fd, &message, Int32(MSG_NOSIGNAL)) }
    }

    /// Writes `bytes`; a short write is possible.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        precondition(fd >= 0, "write on a closed socket")
        return try systemCall("write") { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Half-closes: no more writes from us; the peer reads end of stream.
    public func shutdownWrite() {
        precondition(fd >= 0, "shutdown on a closed socket")
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    public mutating func close() {
        precondition(fd >= 0, "a socket is closed once")
        _ = Glibc.close(fd)
        fd = -1
    }
}
