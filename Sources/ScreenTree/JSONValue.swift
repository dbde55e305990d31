/// A JSON value (RFC 8259). Numbers are IEEE 754 doubles, as RFC 8785 (JCS) and I-JSON
/// (RFC 7493) have them; objects keep their members in canonical order (`JSONObject`).
///
/// Invariants: numbers are finite; strings hold Unicode scalars only (no lone surrogates).
/// Two values are equal when they are the same tree with the same scalars in every string and
/// member name (RFC 8259 §8.3): equal values have the same canonical form, hence the same hash.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.string(let x), .string(let y)): x.isScalarEqual(to: y)
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x == y
        case (.null, _), (.bool, _), (.number, _), (.string, _), (.array, _), (.object, _): false
        }
    }

    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    public var stringValue: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }

    public var numberValue: Double? {
        guard case .number(let number) = self else { return nil }
        return number
    }

    /// The value as an Int when it is a number with no fraction in Int's range.
    public var intValue: Int? {
        guard case .number(let number) = self, number.rounded() == number, abs(number) < 9.0e15 else { return nil }
        return Int(number)
    }

    public var objectValue: JSONObject? {
        guard case .object(let members) = self else { return nil }
        return members
    }

    public var arrayValue: [JSONValue]? {
        guard case .array(let elements) = self else { return nil }
        return elements
    }

    /// Arrays and objects.
    public var isContainer: Bool {
        switch self {
        case .array, .object: true
        case .null, .bool, .number, .string: false
        }
    }

    /// The JSON type name, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension String {
    /// Whether both hold the same Unicode scalars: how JSON compares strings and member names
    /// (RFC 8259 §8.3). `==` also equates canonically equivalent spellings (`é` and `e` + U+0301),
    /// which JSON keeps apart and the canonical form writes differently.
    public func isScalarEqual(to other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        let compared = utf8.withContiguousStorageIfAvailable { x in
            other.utf8.withContiguousStorageIfAvailable { y in x.elementsEqual(y) }
        }
        return (compared ?? nil) ?? utf8.elementsEqual(other.utf8)
    }
}
