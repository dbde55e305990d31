/// HTTP header fields in arrival order, looked up case-insensitively (RFC 9110 §5.1).
///
/// Invariant: names and values are stored as received, without surrounding whitespace.
public struct HeaderFields: Sendable, Equatable, Sequence {
    /// One `name: value` line, as received.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public private(set) var fields: [Field] = []

    public init() {}
    public init(_ pairs: [(String, String)]) { fields = pairs.map { Field(name: $0.0, value: $0.1) } }

    public mutating func append(name: String, value: String) { fields.append(Field(name: name, value: value)) }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// The first value of `name`.
    public subscript(name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    /// How many fields are named `name` (a header that may appear once must not appear twice).
    public func count(of name: String) -> Int { fields.reduce(0) { $0 + ($1.name.caseInsensitiveEquals(name) ? 1 : 0) } }

    /// Every value of `name`, comma-separated lists split into their elements (RFC 9110 §5.3).
    public func elements(_ name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.flatMap { field in
            field.value.split(separator: ",").map { $0.trimmingHTTPWhitespace() }.filter { !$0.isEmpty }
        }
    }

    /// Whether `name` lists `token`, case-insensitively (`Connection: keep-alive, Upgrade`);
    /// scans the values in place (no list is built).
    public func containsToken(_ token: String, in name: String) -> Bool {
        for field in fields where field.name.caseInsensitiveEquals(name) {
            for element in field.value.utf8.split(separator: UInt8(ascii: ",")) {
                var trimmed = element[...]
                while let first = trimmed.first, first == 0x20 || first == 0x09 { trimmed = trimmed.dropFirst() }
                while let last = trimmed.last, last == 0x20 || last == 0x09 { trimmed = trimmed.dropLast() }
                if trimmed.caseInsensitiveEquals(token.utf8) { return true }
            }
        }
        return false
    }
}

extension StringProtocol {
    /// ASCII case-insensitive equality, as header names and tokens compare.
    public func caseInsensitiveEquals(_ other: some StringProtocol) -> Bool {
        utf8.caseInsensitiveEquals(other.utf8)
    }

    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    public func trimmingHTTPWhitespace() -> String {
        trimming { $0 == " " || $0 == "\t" }
    }
}

extension Collection where Element == UInt8 {
    /// ASCII case-insensitive equality of UTF-8 bytes.
    public func caseInsensitiveEquals(_ other: some Collection<UInt8>) -> Bool {
        guard count == other.count else { return false }
        return zip(self, other).allSatisfy { x, y in
            x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A)
        }
    }
}
