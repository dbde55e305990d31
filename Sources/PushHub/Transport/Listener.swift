import CLinux
import Glibc

/// A non-blocking listening TCP socket. A client listener is `shared`: SO_REUSEPORT, so that
/// every loop can have its own on the same port and the kernel spreads connections over them
/// (DESIGN §9); the admin listener is not.
///
/// SO_REUSEPORT would also let a second hub of the same user join the port (and take half of the
/// clients). `claim` guards against that: a hub first binds its client address without
/// SO_REUSEPORT, which fails while anyone listens there, then releases it and binds its group.
///
/// A listener that `defersAccept` (TCP_DEFER_ACCEPT, one second) hands over a connection only once
/// its first bytes arrived (the upgrade request, or a TLS ClientHello), so the loop reads it right
/// after `accept` instead of waking again for it: one wake-up less per connect. A connection that
/// sends nothing is handed over about a second after it connected (when the client acknowledges
/// the kernel's repeated SYN-ACK), and its handshake timeout starts then.
///
/// Invariant: `socket` is listening on `address` (whose port is the bound one, never 0).
public struct Listener: Sendable {
    public private(set) var socket: Socket
    public let address: SocketAddress
    public let defersAccept: Bool

    /// Binds and listens. Port 0 binds a free port; `address.port` tells which.
    public init(
        binding requested: SocketAddress, shared: Bool = false, defersAccept: Bool = false, backlog: Int32 = 4096
    ) throws(SystemError) {
        let fd = try blockingSystemCall("socket") {
            Glibc.socket(
                AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        var socket = Socket(fd: fd)
        do {
            var on: Int32 = 1
            let size = socklen_t(MemoryLayout<Int32>.size)
            try blockingSystemCall("setsockopt(SO_REUSEADDR)") { setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, size) }
            if shared {
                try blockingSystemCall("setsockopt(SO_REUSEPORT)") { setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, size) }
            }
            // Accepted sockets inherit TCP_NODELAY from the listener on Linux: one system call
            // per listener instead of one per connection.
            try blockingSystemCall("setsockopt(TCP_NODELAY)") { setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, size) }
            if defersAccept {
                var seconds: Int32 = 1
                try blockingSystemCall("setsockopt(TCP_DEFER_ACCEPT)") {
                    setsockopt(fd, Int32(IPPROTO_TCP), TCP_DEFER_ACCEPT, &seconds, size)
                }
            }
            var address = try requested.ipv4()
            try blockingSystemCall("bind \(requested)") {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
            try blockingSystemCall("listen") { Glibc.listen(fd, backlog) }
            var bound = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            try blockingSystemCall("getsockname") {
                withUnsafeMutablePointer(to: &bound) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
                }
            }
            self.socket = socket
            self.defersAccept = defersAccept
            self.address = SocketAddress(host: requested.host, port: UInt16(bigEndian: bound.sin_port))
        } catch {
            socket.close()
            throw error
        }
    }

    /// Throws `AddressInUse` when something already listens on `address` (another hub's shared
    /// listeners included), before a shared group is bound there; `flag` is the option that set
    /// it. Port 0 is always free.
    public static func claim(_ address: SocketAddress, flag: String) throws {
        guard address.port != 0 else { return }
        let probe: Listener
        do {
            probe = try Listener(binding: address, shared: false, backlog: 1)
        } catch {
            guard error.errno == EADDRINUSE else { throw error }
            throw AddressInUse(address: address, flag: flag)
        }
        var released = probe
        released.close()
    }

    /// Another process listens on the address a hub was told to use.
    public struct AddressInUse: Error, CustomStringConvertible {
        public var address: SocketAddress
        public var flag: String
        public var description: String {
            "\(address) is already in use (another pushhub, or another program, listens there); "
                + "stop it or choose another \(flag)"
        }
    }

    /// Accepts one pending connection as a non-blocking socket.
    public func accept() throws(SystemError) -> IOResult<Socket> {
        switch try systemCall(
            "accept4", { accept4(socket.fd, nil, nil, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)) })
        {
        case .processed(let fd): return .processed(Socket(fd: fd))
        case .wouldBlock: return .wouldBlock
        }
    }

    public mutating func close() { socket.close() }
}
