/// Where a request goes: a scheme, host and port (the connection), and a request target.
///
/// Invariant (for origins made by `HTTPURL(parsing:)`): `host` is lower-case, a DNS name, a
/// dotted-quad IPv4 address or an IPv6 literal in brackets (`[::1]`); `port` is 1–65535.
public struct HTTPOrigin: Hashable, Sendable, CustomStringConvertible {
    public var isTLS: Bool
    public var host: String
    public var port: UInt16

    public init(isTLS: Bool, host: String, port: UInt16) {
        self.isTLS = isTLS
        self.host = host
        self.port = port
    }

    /// The port the scheme implies: 443 for https, 80 for http.
    public var defaultPort: UInt16 { isTLS ? 443 : 80 }

    /// `host[:port]`, the port only when it is not the scheme's (RFC 9110 §7.2: the Host field).
    public var authority: String { port == defaultPort ? host : host + ":" + String(port) }

    public var description: String { (isTLS ? "https://" : "http://") + host + ":" + String(port) }
}
