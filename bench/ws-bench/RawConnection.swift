import CLinux
import Glibc
import PushHub
import WSProtocol

/// Non-blocking client sockets for the load generator: connect from a chosen 127.0.0.x,
/// upgrade, then frames through epoll.
enum RawConnection {
    /// Opens a TCP connection (blocking connect) from `source`, upgrades it, and returns the
    /// descriptor in non-blocking mode.
    static func openWebSocket(to server: SocketAddress, from source: String, path: String = "/echo") throws -> Int32 {
        try openLink(to: server, from: source, path: path, tls: false).fd
    }

    /// Opens a TCP connection (blocking connect) from `source`, with TLS over it when `tls`,
    /// upgrades it, and returns it with the descriptor in non-blocking mode.
    /// - Parameter compression: offer permessage-deflate (frames may then arrive compressed).
    static func openLink(to server: SocketAddress, from source: String, path: String, tls: Bool, compression: Bool = false)
        throws -> Link
    {
        let fd = try connect(to: server, from: source, nonBlocking: false)
        let link = Link(fd: fd, ssl: tls ? try BenchTLS.connect(fd) : nil)
        let handshake = ClientHandshake(host: server.description, path: path, offersCompression: compression)
        try link.writeAll(handshake.request)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { link.read(into: $0) }
            guard n > 0 else {
                close(fd)
                throw BenchError("handshake failed: errno \(errno)")
            }
            received += buffer[0..<n]
            if let response = try ClientHandshake.parseResponse(received) {
                _ = try handshake.verify(response)
                break
            }
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return link
    }

    static func connect(to server: SocketAddress, from source: String, nonBlocking: Bool) throws -> Int32 {
        let flags =
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
        let fd = socket(AF_INET, flags, 0)
        guard fd >= 0 else { throw BenchError("socket: errno \(errno)") }
        var on: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        // Reset on close: no TIME_WAIT, so that many short connections do not run out of ports.
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        var local = try SocketAddress(host: source, port: 0).ipv4()
        var remote = try server.ipv4()
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        guard
            withUnsafePointer(
                to: &local, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } }) == 0
        else {
            close(fd)
            throw BenchError("bind \(source): errno \(errno)")
        }
        let status = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, size) }
        }
        guard status == 0 || (nonBlocking && errno == EINPROGRESS) else {
            close(fd)
            throw BenchError("connect: errno \(errno)")
        }
        return fd
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw BenchError("send: errno \(errno)")
            }
            sent += n
        }
    }

    /// The i-th loopback source address, 127.0.0.2 ... 127.0.0.250.
    /// One text message as a client sends it: a final frame, masked with a fresh key.
    static func clientText(_ text: String) -> [UInt8] {
        var frame: [UInt8] = []
        FrameEncoder.appendFrame(opcode: .text, payload: Array(text.utf8), maskingKey: .random(), to: &frame)
        return frame
    }

    static func source(_ index: Int) -> String { "127.0.0.\(2 + index % 249)" }
}

/// Percentiles of a sample, in microseconds.
struct Latencies {
    var samples: [UInt64] = []

    mutating func add(_ nanoseconds: UInt64) { samples.append(nanoseconds) }

    func percentile(_ p: Double) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sorted = samples.sorted()
        return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1000
    }
}
