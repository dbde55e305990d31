import PushHub

/// Builds JSON trees (and JSON Pointers into them) from fuzzer bytes, so that every input is a
/// tree and a small edit of the input is usually a small edit of the tree.
///
/// Names, ids and strings come from short lists that make collisions likely and hold the hard
/// cases: pointer escapes (`~`, `/`), canonically equivalent spellings (`é` and `e` + U+0301),
/// names whose UTF-8 and UTF-16 orders differ (U+FFFF and U+10000), array-index look-alikes.
/// Arrays of objects with an `"id"` (the keyed children of DESIGN §4) are common.
///
/// Invariant: depth is at most `maxDepth`; past the end of the input every tree is `null`.
struct JSONTreeGenerator {
    var input: FuzzInput
    let maxDepth = 6

    static let strings = [
        "", "a", "b", "id", "v", "é", "e\u{301}", "~", "/", "a~1b", "0", "1", "-", "00", "\u{FFFF}", "\u{10000}",
        "\u{7F}", "\"\\\n",
    ]
    static let ids = ["a", "b", "c", "d", "e", "é", "e\u{301}"]
    static let numbers: [Double] = [
        0, -0.0, 1, -1, 0.5, 1e21, 1e-7, 123456789.125, 9_007_199_254_740_992,
        .greatestFiniteMagnitude, .leastNonzeroMagnitude,
    ]

    init(_ input: FuzzInput) { self.input = input }

    mutating func value(depth: Int = 0) -> JSONValue {
        let byte = input.byte()
        let kind = depth >= maxDepth ? byte % 4 : byte % 8
        switch kind {
        case 0: return .null
        case 1: return .bool(byte & 0x10 != 0)
        case 2: return .number(number())
        case 3: return .string(string())
        case 4:
            return .array((0..<Int(input.byte() % 5)).map { _ in value(depth: depth + 1) })
        case 5:
            var members = JSONObject()
            for _ in 0..<Int(input.byte() % 5) { members[string()] = value(depth: depth + 1) }
            return .object(members)
        default:
            return .array((0..<Int(input.byte() % 6)).map { _ in keyedChild(depth: depth + 1) })
        }
    }

    /// An object with a string `"id"` drawn from a short list (so ids repeat sometimes).
    mutating func keyedChild(depth: Int) -> JSONValue {
        var members: JSONObject = ["id": .string(Self.ids[Int(input.byte()) % Self.ids.count])]
        for _ in 0..<Int(input.byte() % 3) { members[string()] = value(depth: depth + 1) }
        return .object(members)
    }

    mutating func string() -> String { Self.strings[Int(input.byte()) % Self.strings.count] }

    mutating func number() -> Double {
        let byte = input.byte()
        return byte < 128 ? Double(Int(byte) - 64) : Self.numbers[Int(byte) % Self.numbers.count]
    }

    /// A pointer that mostly follows `document`'s members and indices, sometimes past them
    /// (a new name, the end index `-`, one past the end, a token that is no index).
    mutating func pointer(into document: JSONValue) -> JSONPointer {
        var tokens: [String] = []
        var node: JSONValue? = document
        while input.byte() % 3 != 0 {
            let byte = input.byte()
            switch node {
            case .object(let members)? where byte % 4 != 0 && !members.isEmpty:
                let member = members.members[Int(byte) % members.count]
                tokens.append(member.key)
                node = member.value
            case .array(let elements)? where byte % 4 != 0 && !elements.isEmpty:
                let index = Int(byte) % elements.count
                tokens.append(String(index))
                node = elements[index]
            default:
                tokens.append(byte % 2 == 0 ? string() : (byte % 4 == 1 ? "-" : String(Int(byte) % 4)))
                node = nil
            }
            if tokens.count > maxDepth + 1 { break }
        }
        return JSONPointer(tokens)
    }
}
