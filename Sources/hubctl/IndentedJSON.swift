import PushHub

/// JSON for people: one member or element per line, indented by two spaces, members in the
/// canonical order and scalars exactly as `JSONWriter` writes them (so a tree printed here reads
/// back to the same value and hash). Empty containers stay on one line.
enum IndentedJSON {
    static func string(_ value: JSONValue, indent: String = "") -> String {
        var out = ""
        write(value, indent: indent, to: &out)
        return out
    }

    private static func write(_ value: JSONValue, indent: String, to out: inout String) {
        let inner = indent + "  "
        switch value {
        case .array(let elements) where !elements.isEmpty:
            out += "[\n"
            for (i, element) in elements.enumerated() {
                out += inner
                write(element, indent: inner, to: &out)
                out += i == elements.count - 1 ? "\n" : ",\n"
            }
            out += indent + "]"
        case .object(let members) where !members.isEmpty:
            out += "{\n"
            for (i, member) in members.members.enumerated() {
                out += inner + JSONWriter.string(.string(member.key)) + ": "
                write(member.value, indent: inner, to: &out)
                out += i == members.count - 1 ? "\n" : ",\n"
            }
            out += indent + "}"
        case .null, .bool, .number, .string, .array, .object:
            out += JSONWriter.string(value)
        }
    }
}
