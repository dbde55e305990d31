import Glibc

/// A host and port: one to bind (`--listen HOST:PORT`) or to connect to (a name, an IPv4 or an
/// IPv6 literal; `ResolvedAddress` resolves it).
public struct SocketAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` (or `:PORT`, meaning every interface).
    public init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            return nil
        }
        let host = String(text[..<colon])
        self.init(host: host.isEmpty ? "0.0.0.0" : host, port: port)
    }

    public var description: String { "\(host):\(port)" }

    /// The IPv4 `sockaddr_in` of a literal address (`localhost` is 127.0.0.1): what a listener
    /// binds and what a tool binds as its source.
    public func ipv4() throws(SystemError) -> sockaddr_in {
        var result = sockaddr_in()
        result.sin_family = sa_family_t(AF_INET)
        result.sin_port = port.bigEndian
        let literal = host == "localhost" ? "127.0.0.1" : host
        guard inet_pton(AF_INET, literal, &result.sin_addr) == 1 else {
            throw SystemError(call: "inet_pton(\(host)) [an IPv4 address is expected]", errno: EINVAL)
        }
        return result
    }
}
