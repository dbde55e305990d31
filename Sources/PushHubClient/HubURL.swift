/// The hub's WebSocket endpoint as an app configures it (`ws://host:port/v1/connect`,
/// `wss://…`), and the HTTP URLs derived from it (`fetchScreen` goes to `/v1/screens/{name}` on
/// the same host and port: ws → http, wss → https).
///
/// Invariant: `scheme` is `ws` or `wss`; `host` is a name or an IP literal (IPv6 without
/// brackets); `path` starts with `/`.
public struct HubURL: Sendable, Equatable, CustomStringConvertible {
    public var scheme: String
    public var host: String
    public var port: UInt16
    public var path: String

    /// Parses `ws[s]://host[:port][/path]`; nil for anything else. The default path is
    /// `/v1/connect`; the default port 80 (ws) or 443 (wss).
    public init?(_ text: String) {
        guard let schemeEnd = text.range(of: "://") else { return nil }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "ws" || scheme == "wss" else { return nil }
        let rest = text[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        let path = rest.dropFirst(authority.count)
        var host = Substring(authority)
        var port: UInt16 = scheme == "wss" ? 443 : 80
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let after = host[host.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let parsed = UInt16(after.dropFirst()) else { return nil }
                port = parsed
            }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            guard let parsed = UInt16(host[host.index(after: colon)...]) else { return nil }
            port = parsed
            host = host[..<colon]
        }
        guard !host.isEmpty else { return nil }
        self.init(scheme: scheme, host: String(host), port: port, path: path.isEmpty ? "/v1/connect" : String(path))
    }

    public init(scheme: String, host: String, port: UInt16, path: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
    }

    /// `host:port` as a Host header and a socket address want it (IPv6 in brackets).
    public var authority: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

    public var description: String { "\(scheme)://\(authority)\(path)" }

    /// The same host and port with another path (query included).
    public func with(path: String) -> HubURL { HubURL(scheme: scheme, host: host, port: port, path: path) }

    /// `wss`: TLS.
    public var isSecure: Bool { scheme == "wss" }

    /// The HTTP form of this URL (`ws` → `http`, `wss` → `https`).
    public var httpDescription: String { (scheme == "wss" ? "https" : "http") + "://\(authority)\(path)" }
}
