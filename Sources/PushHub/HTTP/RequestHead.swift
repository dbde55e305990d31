import WSProtocol

/// A parsed HTTP/1.1 request head (RFC 9112 §3, §5).
///
/// Invariant (`RequestParser`): `method` is a token; `version` is `HTTP/1.1` or `HTTP/1.0`;
/// `target` is visible ASCII starting with `/` (origin form; an absolute-form target is kept as
/// its path and query); header names are tokens, values hold no control character but HTAB.
public struct RequestHead: Sendable, Equatable {
    public var method: String
    public var target: String
    public var version: String
    public var headers: HeaderFields

    /// The target without its query.
    public var path: Substring {
        target.firstIndex(of: "?").map { target[..<$0] } ?? target[...]
    }

    /// The query's `name=value` pairs, percent-decoded.
    public var query: [(name: String, value: String)] {
        guard let mark = target.firstIndex(of: "?") else { return [] }
        return target[target.index(after: mark)...].split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (Self.percentDecoded(parts[0]), parts.count > 1 ? Self.percentDecoded(parts[1]) : "")
        }
    }

    /// A true/false query parameter (`?dry_run=true`, `?force=1`): false when absent, nil when
    /// its value is neither `true`/`1` nor `false`/`0`.
    public func queryFlag(_ name: String) -> Bool? {
        switch query.first(where: { $0.name == name })?.value {
        case nil, "false", "0": false
        case "true", "1": true
        default: nil
        }
    }

    /// Whether the connection stays open after the response (RFC 9112 §9.3).
    public var isKeepAlive: Bool {
        if headers.containsToken("close", in: "Connection") { return false }
        return version == "HTTP/1.1" || headers.containsToken("keep-alive", in: "Connection")
    }

    static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
