/// Where a request goes: a scheme, host and port (the connection), and a request target.
public struct HTTPOrigin: Hashable, Sendable, CustomStringConvertible {
    public var isTLS: Bool
    public var host: String
    public var port: UInt16

    public init(isTLS: Bool, host: String, port: UInt16) {
        self.isTLS = isTLS
        self.host = host
        self.port = port
    }

    public var description: String { (isTLS ? "https://" : "http://") + host + ":" + String(port) }
}

/// Why a URL was refused; the description names what to fix.
public struct HTTPURLError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// An absolute `http` or `https` URL (RFC 3986, RFC 9110 §4.2) as the hub's outbound requests
/// use it: the origin, and the target (path and query, "/" when empty). No user info, no
/// fragment.
public struct HTTPURL: Equatable, Sendable, CustomStringConvertible {
    public var origin: HTTPOrigin
    /// "/path?query".
    public var target: String

    public init(origin: HTTPOrigin, target: String) {
        self.origin = origin
        self.target = target
    }

    /// Parses `text`; helper h1 makes it strict (IPv6 literals, ports, characters).
    public init(parsing text: String) throws(HTTPURLError) {
        let isTLS: Bool
        let rest: Substring
        if text.hasPrefix("https://") {
            isTLS = true
            rest = text.dropFirst(8)
        } else if text.hasPrefix("http://") {
            isTLS = false
            rest = text.dropFirst(7)
        } else {
            throw HTTPURLError("\(text) is not an http:// or https:// URL")
        }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var target = String(rest[authorityEnd...])
        if target.isEmpty { target = "/" }
        if target.hasPrefix("?") { target = "/" + target }
        var host = String(authority)
        var port: UInt16 = isTLS ? 443 : 80
        if let colon = authority.lastIndex(of: ":") {
            guard let number = UInt16(authority[authority.index(after: colon)...]) else {
                throw HTTPURLError("\(text) has a bad port")
            }
            host = String(authority[..<colon])
            port = number
        }
        guard !host.isEmpty else { throw HTTPURLError("\(text) has no host") }
        origin = HTTPOrigin(isTLS: isTLS, host: host, port: port)
        self.target = target
    }

    /// Whether the host is a loopback name or address (127.0.0.0/8, ::1, localhost): where the
    /// hub allows cleartext `http://` (tests).
    public var isLoopback: Bool {
        let host = origin.host
        return host == "localhost" || host == "[::1]" || host == "::1" || host.hasPrefix("127.")
    }

    public var description: String { origin.description + target }
}
