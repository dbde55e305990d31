import Portable

/// Why a URL was refused; the description names the URL and what to fix.
public struct HTTPURLError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// An absolute `http` or `https` URL (RFC 3986, RFC 9110 §4.2) as the hub's outbound requests
/// use it: the origin, and the target (path and query, "/" when empty).
///
/// Strict, so that what the hub connects to is what an operator reads in the URL:
/// - the scheme is `http` or `https` (any case);
/// - no user info (`user@host`: RFC 9110 §4.2.4 deprecates it, and it hides the real host), no
///   fragment (`#…` is never sent), no space, control character or raw non-ASCII byte anywhere;
/// - the host is a DNS name (letters, digits, `-`, `_` and `.`, no empty label, at most 253
///   bytes), a dotted-quad IPv4 address, or an IPv6 literal in brackets (`[::1]`; no zone, no
///   IPvFuture); it is lower-cased (names compare without case, RFC 4343);
/// - the port, if given, is 1–65535 in decimal;
/// - the path and query are RFC 3986 characters, percent-encoding kept as is but well formed
///   (`%` and two hex digits).
///
/// Invariant: `origin` satisfies `HTTPOrigin`'s invariant; `target` starts with `/` and holds
/// only visible ASCII.
public struct HTTPURL: Equatable, Sendable, CustomStringConvertible {
    public var origin: HTTPOrigin
    /// "/path?query".
    public var target: String

    public init(origin: HTTPOrigin, target: String) {
        self.origin = origin
        self.target = target
    }

    public init(parsing text: String) throws(HTTPURLError) {
        let bytes = Array(text.utf8)
        func refuse(_ why: String) -> HTTPURLError { HTTPURLError("'\(Self.printable(text))' \(why)") }
        if let bad = bytes.first(where: { $0 <= 0x20 || $0 >= 0x7F }) {
            throw refuse(
                bad == 0x20
                    ? "has a space (percent-encode it as %20)"
                    : bad < 0x20 || bad == 0x7F
                        ? "has a control character" : "has a character outside ASCII (percent-encode it)")
        }
        guard let schemeEnd = bytes.firstRange(of: Array("://".utf8)) else {
            throw refuse("is not an http:// or https:// URL")
        }
        let scheme = bytes[..<schemeEnd.lowerBound]
        let isTLS: Bool
        if scheme.caseInsensitiveEquals("https".utf8) {
            isTLS = true
        } else if scheme.caseInsensitiveEquals("http".utf8) {
            isTLS = false
        } else {
            throw refuse("is not an http:// or https:// URL")
        }
        if bytes.contains(UInt8(ascii: "#")) { throw refuse("has a fragment (#…), which is never sent: remove it") }
        let rest = bytes[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        if authority.contains(UInt8(ascii: "@")) {
            throw refuse("has user info (user@host): give credentials in a header, not the URL")
        }
        let (host, portText) = try Self.split(authority, refuse)
        var port = isTLS ? UInt16(443) : 80
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(Self.isDigit),
                let number = Int(String(decoding: portText, as: UTF8.self)), (1...65535).contains(number)
            else {
                throw refuse("has a bad port (1–65535)")
            }
            port = UInt16(number)
        }
        guard !host.isEmpty else { throw refuse("has no host") }
        if host.first == UInt8(ascii: "[") {
            guard IPv6Address(host.dropFirst().dropLast()) != nil else {
                throw refuse("has a bad IPv6 literal (brackets around an address such as ::1, no zone)")
            }
        } else if !Self.isHostName(host) {
            throw refuse("has a bad host (a DNS name of letters, digits, '-' and '.', or an IP address)")
        }
        var target = Array(rest[authorityEnd...])
        if target.first == UInt8(ascii: "?") { target.insert(UInt8(ascii: "/"), at: 0) }
        if target.isEmpty { target = [UInt8(ascii: "/")] }
        guard Self.isTarget(target) else {
            throw refuse("has a bad path or query (RFC 3986 characters; '%' followed by two hex digits)")
        }
        origin = HTTPOrigin(isTLS: isTLS, host: String(decoding: host, as: UTF8.self).lowercased(), port: port)
        self.target = String(decoding: target, as: UTF8.self)
    }

    /// Whether the host is a loopback name or address (`localhost`, 127.0.0.0/8, `[::1]`): where
    /// the hub allows cleartext `http://` (tests).
    public var isLoopback: Bool {
        let host = origin.host
        if host == "localhost" { return true }
        if host.hasPrefix("[") {
            return IPv6Address(host.utf8.dropFirst().dropLast()).map { $0.octets == IPv6Address.loopback } ?? false
        }
        return IPv4Address(Array(host.utf8)[...])?.octets.0 == 127
    }

    public var description: String { (origin.isTLS ? "https://" : "http://") + origin.authority + target }

    // MARK: - Parts

    /// The authority's host and port text (nil: no `:port`). An IPv6 literal keeps its brackets.
    private static func split(_ authority: ArraySlice<UInt8>, _ refuse: (String) -> HTTPURLError)
        throws(HTTPURLError) -> (host: ArraySlice<UInt8>, port: ArraySlice<UInt8>?)
    {
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else {
                throw refuse("has an IPv6 literal without its closing ]")
            }
            let host = authority[...close]
            let after = authority[(close + 1)...]
            guard let first = after.first else { return (host, nil) }
            guard first == UInt8(ascii: ":") else { throw refuse("has something after its IPv6 literal but a :port") }
            return (host, after.dropFirst())
        }
        guard let colon = authority.firstIndex(of: UInt8(ascii: ":")) else { return (authority, nil) }
        return (authority[..<colon], authority[(colon + 1)...])
    }

    /// A DNS name (RFC 1123 labels, `_` allowed as some names have it) or a dotted-quad address.
    /// A name whose last label is a number (`10.1`, `0x7f.1`, `127.0.0.01`) must be a canonical
    /// dotted quad: `getaddrinfo` would read it as an address in some other form.
    static func isHostName(_ host: ArraySlice<UInt8>) -> Bool {
        guard host.count <= 253 else { return false }
        let labels = host.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        if let last = labels.last, last.allSatisfy(isDigit) || last.starts(with: "0x".utf8) {
            return IPv4Address(host) != nil
        }
        return labels.allSatisfy { label in
            (1...63).contains(label.count) && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
                && label.allSatisfy {
                    isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
                }
        }
    }

    /// `/` followed by RFC 3986 path and query characters: unreserved, sub-delims, `:`, `@`,
    /// `/`, `?` and well-formed percent-encodings.
    static func isTarget(_ target: [UInt8]) -> Bool {
        guard target.first == UInt8(ascii: "/") else { return false }
        var index = 0
        while index < target.count {
            let byte = target[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < target.count, isHexDigit(target[index + 1]), isHexDigit(target[index + 2]) else {
                    return false
                }
                index += 3
                continue
            }
            guard isLetter(byte) || isDigit(byte) || "-._~!$&'()*+,;=:@/?".utf8.contains(byte) else { return false }
            index += 1
        }
        return true
    }

    static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
    static func isLetter(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) }
    static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
    }

    /// `text` safe to put in an error: control characters shown as `\u{…}`, at most 200 bytes.
    static func printable(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars.prefix(200) {
            shown += scalar.value < 0x20 || scalar.value == 0x7F ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return text.unicodeScalars.count > 200 ? shown + "…" : shown
    }
}
