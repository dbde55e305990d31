import PushHub

/// Component schemas (DESIGN §16): compiling a schema and validating values against it, and
/// the `pattern` regular expressions on their own.
///
/// Input, one of:
/// - a schema JSON text, NUL, a value JSON text (see `JSONPair`; the corpus holds the unit
///   tests' pairs);
/// - otherwise a first byte that is even: the rest is NUL-separated texts, a pattern and then
///   strings to match;
/// - otherwise (odd): a schema and a value generated from the bytes (`SchemaGenerator`).
///
/// Properties of a schema and a value:
/// - a schema that compiles, written as JSON and read again, compiles to an equal schema;
/// - `isValid` agrees with whether `validate` finds violations; at most `limit` are reported,
///   and with a lower limit the same first ones;
/// - every violation's pointer names a place that exists in the value;
/// - the value (an object) as a node of a registered component: `TreeValidation` reports what
///   validating the node without its hub keys reports.
///
/// Properties of a pattern: it compiles or is refused at an offset inside it; the DFA and the
/// NFA simulation agree on every string; a pattern of the first string's scalars (syntax
/// characters escaped) matches another string exactly when that string contains them, and,
/// anchored with `^…$`, exactly when the two are the same scalars.
enum ComponentSchemaFuzz {
    static let limit = 50

    static func run(_ data: UnsafeRawBufferPointer) throws(PropertyViolation) {
        if let (schema, value) = JSONPair.parse(data) {
            try checkSchema(schema, value)
            return
        }
        var input = FuzzInput(data)
        if input.byte() % 2 == 0 {
            try checkPattern(FuzzInput.split(UnsafeRawBufferPointer(rebasing: data.dropFirst())))
        } else {
            var generator = SchemaGenerator(tree: JSONTreeGenerator(input))
            let schema = generator.schema()
            try checkSchema(schema, generator.tree.value())
        }
    }

    // MARK: Schemas

    static func checkSchema(_ json: JSONValue, _ value: JSONValue) throws(PropertyViolation) {
        guard let schema = try? ComponentSchema(json: json) else { return }
        let reread = try? ComponentSchema(json: JSONReader.parse(JSONWriter.write(schema.json)))
        try check(reread == schema, "\(json) read back as \(String(describing: reread?.json))")

        var all: [TreeViolation] = []
        schema.validate(value, at: JSONPointer(), into: &all, limit: limit)
        try check(all.count <= limit, "\(all.count) violations past the limit \(limit)")
        try check(schema.isValid(value) == all.isEmpty, "isValid disagrees with \(all) for \(value) against \(json)")
        var few: [TreeViolation] = []
        schema.validate(value, at: JSONPointer(), into: &few, limit: 2)
        try check(few == Array(all.prefix(2)), "limit 2 gave \(few), limit \(limit) began \(all.prefix(2))")
        for violation in all {
            try check(
                resolves(violation.pointer, in: value), "\(violation) names no place in \(value) (schema \(json))")
        }

        // As a node: TreeValidation skips the hub keys the way removing them does.
        let name = "Fuzzed-Component"
        guard case .object(let members) = value, members["v"] == nil || members["v"] == .number(1),
            !contains(value, type: name, below: true),
            let component = try? Component(
                name: name, body: .object(["versions": .object(["1": .object(["schema": json])])]))
        else { return }
        var node = members
        node["type"] = .string(name)
        var stripped = members
        for key in TreeValidation.hubKeys { stripped[key] = nil }
        var expected: [TreeViolation] = []
        schema.validate(.object(stripped), at: JSONPointer(), into: &expected, limit: limit)
        // Nodes of other (unregistered) types inside add nothing; strict would.
        let found = TreeValidation.violations(
            in: .object(node), components: [name: component], strict: false, limit: limit)
        try check(found == expected, "as a node: \(found); without hub keys: \(expected) (schema \(json))")
    }

    /// Whether an RFC 6901 pointer leads somewhere in `value`.
    static func resolves(_ pointer: String, in value: JSONValue) -> Bool {
        guard let parsed = JSONPointer(parsing: pointer) else { return false }
        var node = value
        for token in parsed.tokens {
            switch node {
            case .object(let members):
                guard let member = members[token] else { return false }
                node = member
            case .array(let elements):
                guard let index = Int(token), String(index) == token, elements.indices.contains(index) else {
                    return false
                }
                node = elements[index]
            case .null, .bool, .number, .string:
                return false
            }
        }
        return true
    }

    /// Whether an object below the root (or the root, unless `below`) has `"type": name`.
    static func contains(_ value: JSONValue, type name: String, below: Bool) -> Bool {
        switch value {
        case .object(let members):
            if !below, members["type"]?.stringValue.map({ $0.isScalarEqual(to: name) }) == true { return true }
            return members.contains { contains($0.value, type: name, below: false) }
        case .array(let elements):
            return elements.contains { contains($0, type: name, below: false) }
        case .null, .bool, .number, .string:
            return false
        }
    }

    // MARK: Patterns

    static func checkPattern(_ parts: [[UInt8]]) throws(PropertyViolation) {
        let texts = parts.map { String(decoding: $0, as: UTF8.self) }
        let source = texts[0]
        switch Result(catching: { () throws(SchemaPattern.SyntaxError) in try SchemaPattern(source) }) {
        case .success(let pattern):
            for text in texts.dropFirst() {
                try check(
                    pattern.matches(text) == pattern.matchesBySimulation(text),
                    "\(source.debugDescription) on \(text.debugDescription): the DFA says \(pattern.matches(text))")
            }
        case .failure(let error):
            try check(
                (0...source.unicodeScalars.count).contains(error.offset),
                "\(source.debugDescription) refused at offset \(error.offset), outside it: \(error.message)")
        }

        // The first string as a literal pattern, against every string (itself included).
        let needle = Array(source.unicodeScalars)
        guard needle.count + 2 <= SchemaPattern.maxScalars else { return }
        let literal = escaped(needle)
        let search: SchemaPattern
        let whole: SchemaPattern
        do throws(SchemaPattern.SyntaxError) {
            search = try SchemaPattern(literal)
            whole = try SchemaPattern("^" + literal + "$")
        } catch {
            throw PropertyViolation(description: "the literal pattern \(literal.debugDescription) is refused: \(error)")
        }
        for text in texts {
            let haystack = Array(text.unicodeScalars)
            try check(
                search.matches(text) == contains(haystack, needle),
                "\(literal.debugDescription) on \(text.debugDescription): \(search.matches(text))")
            try check(
                whole.matches(text) == (haystack == needle),
                "^\(literal)$ on \(text.debugDescription): \(whole.matches(text))")
        }
    }

    /// `scalars` as a pattern that matches exactly them: ECMA-262's syntax characters escaped.
    static func escaped(_ scalars: [Unicode.Scalar]) -> String {
        var text = String.UnicodeScalarView()
        for scalar in scalars {
            if #"^$\.*+?()[]{}|/"#.unicodeScalars.contains(scalar) { text.append("\\") }
            text.append(scalar)
        }
        return String(text)
    }

    /// Whether `needle` occurs in `haystack`, contiguous (the naive search).
    static func contains(_ haystack: [Unicode.Scalar], _ needle: [Unicode.Scalar]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { start in
            haystack[start..<(start + needle.count)].elementsEqual(needle)
        }
    }
}

/// Schemas in the supported subset built from fuzzer bytes, over the names and values
/// `JSONTreeGenerator` uses (so properties, required and enums meet the values), with now and
/// then a keyword or pattern that is refused.
///
/// Invariant: depth is at most `maxDepth`; past the end of the input every schema is `true`.
struct SchemaGenerator {
    var tree: JSONTreeGenerator
    let maxDepth = 4

    static let patterns = [
        "^a", "é$", "[0-9]+", "^(a|b)*$", #"\d"#, ".", "^$", "a{2,}", #"^\w+$"#, "(?=x)", "^[^~/]*$", "e\u{301}",
        #"\bid\b"#, "[", "^.{0,1}$",
    ]

    mutating func schema(depth: Int = 0) -> JSONValue {
        let byte = tree.input.byte()
        if byte < 16 { return .bool(byte % 8 != 0) }
        var members = JSONObject()
        for _ in 0..<Int(byte % 5) {
            let keyword = tree.input.byte()
            switch keyword % 16 {
            case 0:
                let names = ["object", "array", "string", "number", "integer", "boolean", "null"]
                let first = JSONValue.string(names[Int(tree.input.byte()) % names.count])
                members["type"] =
                    keyword & 0x10 == 0 ? first : .array([first, .string(names[Int(tree.input.byte()) % names.count])])
            case 1 where depth < maxDepth:
                var properties = JSONObject()
                for _ in 0..<Int(tree.input.byte() % 4) { properties[tree.string()] = schema(depth: depth + 1) }
                members["properties"] = .object(properties)
            case 2:
                members["required"] = .array((0..<Int(tree.input.byte() % 3)).map { _ in .string(tree.string()) })
            case 3:
                members["additionalProperties"] = depth < maxDepth ? schema(depth: depth + 1) : .bool(false)
            case 4 where depth < maxDepth:
                members["items"] = schema(depth: depth + 1)
            case 5:
                members["enum"] = .array(
                    (0..<Int(tree.input.byte() % 4)).map { _ in tree.value(depth: tree.maxDepth - 2) })
            case 6:
                members["const"] = tree.value(depth: tree.maxDepth - 2)
            case 7:
                members["minimum"] = .number(tree.number())
            case 8:
                members["maximum"] = .number(tree.number())
            case 9:
                members["minLength"] = .number(Double(tree.input.byte() % 4))
            case 10:
                members["maxLength"] = .number(Double(tree.input.byte() % 4))
            case 11, 12:
                members["pattern"] = .string(Self.patterns[Int(tree.input.byte()) % Self.patterns.count])
            case 13:
                members["title"] = .string(tree.string())
            case 14 where keyword & 0x30 == 0:
                members["oneOf"] = .array([])
            default:
                members["type"] = .string("object")
            }
        }
        return .object(members)
    }
}
