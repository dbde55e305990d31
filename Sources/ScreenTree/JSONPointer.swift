/// An RFC 6901 JSON Pointer: `/a/0/b~1c` is the tokens `a`, `0`, `b/c`.
///
/// Invariant: `tokens` are unescaped; `description` escapes `~` as `~0` and `/` as `~1`.
public struct JSONPointer: Equatable, Sendable, CustomStringConvertible {
    public var tokens: [String]

    public init(_ tokens: [String] = []) { self.tokens = tokens }

    public init?(parsing text: String) {
        guard !text.isEmpty else {
            self.init()
            return
        }
        guard text.hasPrefix("/") else { return nil }
        var tokens: [String] = []
        for part in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            var token = ""
            var iterator = part.makeIterator()
            while let c = iterator.next() {
                if c == "~" {
                    switch iterator.next() {
                    case "0": token.append("~")
                    case "1": token.append("/")
                    default: return nil
                    }
                } else {
                    token.append(c)
                }
            }
            tokens.append(token)
        }
        self.init(tokens)
    }

    public func appending(_ token: String) -> JSONPointer { JSONPointer(tokens + [token]) }
    public func appending(_ index: Int) -> JSONPointer { JSONPointer(tokens + [String(index)]) }

    public var description: String {
        tokens.map { "/" + $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1") }
            .joined()
    }
}
