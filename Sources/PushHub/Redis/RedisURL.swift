/// Where Redis is and how to sign in: `redis://[user:password@]host[:port][/db]` (DESIGN §11),
/// the form redis-cli and most clients accept (https://www.iana.org/assignments/uri-schemes/prov/redis).
/// User and password are percent-decoded; a password alone is `redis://:password@host`.
///
/// Invariants: `port` is 1…65535; `database` ≥ 0; `host` is not empty (an IPv6 literal keeps
/// its brackets, as `SocketAddress` expects).
struct RedisURL: Equatable, Sendable, CustomStringConvertible {
    var host: String
    var port: Int = 6379
    var user: String?
    var password: String?
    var database = 0
    var usesTLS = false

    /// Why a `--redis` value is not a Redis URL.
    struct ParseError: Error, Equatable, CustomStringConvertible {
        var description: String
    }

    init(host: String, port: Int = 6379) {
        self.host = host
        self.port = port
    }

    init(_ text: String) throws(ParseError) {
        let example = "expected redis://[user:password@]host[:port][/db], e.g. redis://127.0.0.1:6379/0"
        var rest: Substring
        if text.hasPrefix("redis://") {
            rest = text.dropFirst("redis://".count)
        } else if text.hasPrefix("rediss://") {
            rest = text.dropFirst("rediss://".count)
            usesTLS = true
        } else {
            throw ParseError(description: "\"\(text)\" is not a Redis URL: \(example)")
        }
        if rest.contains("?") || rest.contains("#") {
            throw ParseError(description: "\"\(text)\": query parameters are not supported; \(example)")
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                let user = try Self.percentDecoded(credentials[..<colon], in: text)
                self.user = user.isEmpty ? nil : user
                password = try Self.percentDecoded(credentials[credentials.index(after: colon)...], in: text)
            } else {
                // redis-cli reads a lone userinfo as the password (the default user's).
                password = try Self.percentDecoded(credentials, in: text)
            }
        }
        var hostPart = rest
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw ParseError(description: "\"\(text)\": an IPv6 address in brackets has no \"]\"")
            }
            hostPart = rest[...close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw ParseError(description: "\"\(text)\": \(example)") }
                port = try Self.port(after.dropFirst(), in: text)
            }
        } else if let colon = rest.lastIndex(of: ":") {
            hostPart = rest[..<colon]
            port = try Self.port(rest[rest.index(after: colon)...], in: text)
        }
        guard !hostPart.isEmpty else { throw ParseError(description: "\"\(text)\" names no host; \(example)") }
        host = String(hostPart)
        if !path.isEmpty {
            guard let database = Int(path), database >= 0 else {
                throw ParseError(description: "\"\(text)\": the database \"\(path)\" is not a number ≥ 0")
            }
            self.database = database
        }
    }

    private static func port(_ text: Substring, in url: String) throws(ParseError) -> Int {
        guard let port = Int(text), (1...65535).contains(port) else {
            throw ParseError(description: "\"\(url)\": the port \"\(text)\" is not a number from 1 to 65535")
        }
        return port
    }

    private static func percentDecoded(_ text: Substring, in url: String) throws(ParseError) -> String {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let high = utf8.index(after: index)
                guard high < utf8.endIndex, utf8.index(after: high) < utf8.endIndex,
                    let value = UInt8(String(decoding: [utf8[high], utf8[utf8.index(after: high)]], as: UTF8.self), radix: 16)
                else {
                    throw ParseError(description: "\"\(url)\": a \"%\" in the credentials is not followed by two hex digits")
                }
                bytes.append(value)
                index = utf8.index(index, offsetBy: 3)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The URL with the password masked, for logs and status answers.
    var description: String {
        let credentials =
            switch (user, password) {
            case (nil, nil): ""
            case (let user?, nil): "\(user)@"
            case (let user, _?): "\(user ?? ""):***@"
            }
        return "\(usesTLS ? "rediss" : "redis")://\(credentials)\(host):\(port)/\(database)"
    }

    var address: SocketAddress { SocketAddress(host: host, port: UInt16(port)) }
}
