import Glibc

/// A blocking TCP client socket with a receive timeout, for tools (hubctl, the conformance
/// testee, benchmarks), never for the hub's loops.
///
/// Invariant: owns its descriptor; `close()` releases it and later calls fail with EBADF-free
/// `SystemError`s rather than touching a reused descriptor.
public final class BlockingSocket {
    private var fd: Int32

    /// Connects to `address` — an IPv4 or IPv6 literal or a host name, trying each address it
    /// resolves to in turn — optionally from the IPv4 `source` (to spread over 127.0.0.x).
    public init(connectingTo address: SocketAddress, from source: String? = nil, timeout: Duration = .seconds(5))
        throws(SystemError)
    {
        var lastError = SystemError(call: "resolve \(address.host) (no address)", errno: EINVAL)
        for candidate in try ResolvedAddress.resolve(address) where source == nil || candidate.family == AF_INET {
            do {
                fd = try Self.connect(candidate, address: address, from: source, timeout: timeout)
                return
            } catch {
                lastError = error
            }
        }
        fd = -1
        throw lastError
    }

    private static func connect(_ remote: ResolvedAddress, address: SocketAddress, from source: String?, timeout: Duration)
        throws(SystemError) -> Int32
    {
        let fd = Glibc.socket(remote.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError(call: "socket", errno: errno) }
        do throws(SystemError) {
            if let source {
                var local = try SocketAddress(host: source, port: 0).ipv4()
                let status = withUnsafePointer(to: &local) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                guard status == 0 else { throw SystemError(call: "bind \(source)", errno: errno) }
            }
            Self.setTimeout(fd, timeout)
            var on: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            var storage = remote.storage
            let status = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, remote.length) }
            }
            guard status == 0 else { throw SystemError(call: "connect \(address)", errno: errno) }
            return fd
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// The descriptor, for a layer on top (TLS); it stays owned by this socket.
    public var descriptor: Int32 { fd }

    /// Sets how long `read` waits before failing with EAGAIN.
    public func setTimeout(_ timeout: Duration) { Self.setTimeout(fd, timeout) }

    private static func setTimeout(_ fd: Int32, _ timeout: Duration) {
        let nanos = timeout.nanoseconds
        var value = timeval(tv_sec: Int(nanos / 1_000_000_000), tv_usec: Int((nanos % 1_000_000_000) / 1000))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Writes every byte.
    public func write(_ bytes: [UInt8]) throws(SystemError) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError(call: "send", errno: errno)
            }
            sent += n
        }
    }

    /// Reads what is available (at least one byte); an empty result is end of stream.
    public func read(max: Int = 64 << 10) throws(SystemError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError(call: "recv", errno: errno)
            }
            buffer.removeLast(max - n)
            return buffer
        }
    }

    public func shutdownWrite() { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }

    /// Ends both directions: a read blocked in another thread returns end of stream. The
    /// descriptor stays open (and its number taken) until `close()` or deinit.
    public func shutdown() { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }

    public func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }
}
