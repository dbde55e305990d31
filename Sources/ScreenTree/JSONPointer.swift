/// An RFC 6901 JSON Pointer: `/a/0/b~1c` is the tokens `a`, `0`, `b/c`.
///
/// Invariant: `tokens` are unescaped; `description` escapes `~` as `~0` and `/` as `~1`; reading,
/// writing and comparing work on Unicode scalars, never on `Character`s.
public struct JSONPointer: Equatable, Sendable, CustomStringConvertible {
    public var tokens: [String]

    public init(_ tokens: [String] = []) { self.tokens = tokens }

    /// Reads the pointer scalar by scalar (RFC 6901 is defined on code points): a combining mark
    /// after `/` or `~` must not merge with it into one `Character`.
    public init?(parsing text: String) {
        var scalars = text.unicodeScalars.makeIterator()
        guard let first = scalars.next() else {
            self.init()
            return
        }
        guard first == "/" else { return nil }
        var tokens: [String] = []
        var token = String.UnicodeScalarView()
        while let scalar = scalars.next() {
            switch scalar {
            case "/":
                tokens.append(String(token))
                token = String.UnicodeScalarView()
            case "~":
                switch scalars.next() {
                case "0": token.append("~")
                case "1": token.append("/")
                default: return nil
                }
            default:
                token.append(scalar)
            }
        }
        tokens.append(String(token))
        self.init(tokens)
    }

    /// Token by token, scalar by scalar: `/é` and `/e` + U+0301 name two members (RFC 8259 §8.3).
    public static func == (a: JSONPointer, b: JSONPointer) -> Bool {
        a.tokens.count == b.tokens.count && zip(a.tokens, b.tokens).allSatisfy { $0.isScalarEqual(to: $1) }
    }

    /// Whether `other` points inside what this pointer points at (tokens compared as `==` does).
    public func isProperPrefix(of other: JSONPointer) -> Bool {
        other.tokens.count > tokens.count && zip(tokens, other.tokens).allSatisfy { $0.isScalarEqual(to: $1) }
    }

    public func appending(_ token: String) -> JSONPointer { JSONPointer(tokens + [token]) }
    public func appending(_ index: Int) -> JSONPointer { JSONPointer(tokens + [String(index)]) }

    public var description: String {
        var text = String.UnicodeScalarView()
        for token in tokens {
            text.append("/")
            for scalar in token.unicodeScalars {
                switch scalar {
                case "~": text.append(contentsOf: "~0".unicodeScalars)
                case "/": text.append(contentsOf: "~1".unicodeScalars)
                default: text.append(scalar)
                }
            }
        }
        return String(text)
    }
}
