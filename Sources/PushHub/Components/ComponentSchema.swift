/// Why a schema cannot be registered: where in the schema (RFC 6901, relative to the schema's
/// root) and one sentence saying what to change.
public struct SchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    public var pointer: String
    public var message: String

    public init(pointer: String, message: String) {
        self.pointer = pointer
        self.message = message
    }

    public var description: String { pointer.isEmpty ? message : "\(pointer): \(message)" }
}

/// A component version's schema (DESIGN §16): the documented subset of JSON Schema 2020-12,
/// compiled once when registered and then only evaluated.
///
/// Keywords, with 2020-12's meaning: `type` (a name or an array of names: object, array,
/// string, number, integer, boolean, null — 1.0 is an integer), `properties`, `required`,
/// `additionalProperties` (a boolean or a schema), `items` (one schema), `enum`, `const`
/// (JSON equality: numbers by value, member order irrelevant, strings scalar by scalar),
/// `minimum`, `maximum`, `minLength`, `maxLength` (in Unicode scalars) and `pattern`
/// (`SchemaPattern`: an unanchored search). The annotations `$schema`, `$id`, `$comment`,
/// `title`, `description`, `default` and `examples` are accepted and ignored; any other keyword
/// is refused, naming it. `true` and `false` are schemas wherever a schema may stand.
///
/// Invariants: `json` is exactly what was registered (answered by GET); every keyword in it has
/// been checked and compiled, so validating never parses, and never fails other than by
/// reporting violations of the value.
public struct ComponentSchema: Sendable, Equatable {
    public let json: JSONValue
    let root: Compiled

    /// The keywords validation understands, in the order error messages list them.
    public static let keywords = [
        "type", "properties", "required", "additionalProperties", "items", "enum", "const", "minimum", "maximum",
        "minLength", "maxLength", "pattern",
    ]
    /// Accepted and ignored.
    public static let annotations = ["$schema", "$id", "$comment", "title", "description", "default", "examples"]
    /// The most entries one `properties`, `required` or `enum` may have: each node is checked
    /// against them on the control plane's one thread, so a publish's cost must stay proportional
    /// to its size, not to its size times a schema's.
    public static let maxListed = 1000

    /// Checks and compiles `json`.
    /// - Throws: `SchemaError` at the first keyword that is unknown, malformed or (a pattern)
    ///   outside the supported regular-expression subset.
    public init(json: JSONValue) throws(SchemaError) {
        self.json = json
        self.root = try Compiled(json, at: JSONPointer())
    }

    /// Appends each way `value` fails (pointers are `pointer` + the path inside `value`); stops
    /// appending once `violations.count == limit`.
    public func validate(
        _ value: JSONValue, at pointer: JSONPointer, into violations: inout [TreeViolation], limit: Int
    ) {
        var list = ViolationList(base: pointer, violations: violations, limit: limit)
        violations = []  // `list` holds the only reference: appending does not copy
        if !list.isDone { root.validate(value, into: &list, ignoringHubKeys: false) }
        violations = list.violations
    }

    /// Whether `value` has no violation (the first one found ends the check).
    public func isValid(_ value: JSONValue) -> Bool {
        var first = FirstViolation()
        root.validate(value, into: &first, ignoringHubKeys: false)
        return !first.isDone
    }

    /// Whether a node matches with its hub keys (`type`, `v`, `fallback`, `min_app_version`)
    /// skipped, as if they were removed — without copying the node.
    func admitsNode(_ node: JSONValue) -> Bool {
        var first = FirstViolation()
        root.validate(node, into: &first, ignoringHubKeys: true)
        return !first.isDone
    }

    /// Reports a node's violations with its hub keys skipped (see `admitsNode`) to `sink`.
    func validateNode<Sink: ViolationSink>(_ node: JSONValue, into sink: inout Sink) {
        root.validate(node, into: &sink, ignoringHubKeys: true)
    }

    public static func == (a: ComponentSchema, b: ComponentSchema) -> Bool { a.json == b.json }
}

// MARK: - Types

extension ComponentSchema {
    /// The seven type names of JSON Schema's `type`, as a set.
    struct TypeSet: OptionSet, Sendable {
        let rawValue: UInt8

        static let object = TypeSet(rawValue: 1 << 0)
        static let array = TypeSet(rawValue: 1 << 1)
        static let string = TypeSet(rawValue: 1 << 2)
        static let number = TypeSet(rawValue: 1 << 3)
        static let integer = TypeSet(rawValue: 1 << 4)
        static let boolean = TypeSet(rawValue: 1 << 5)
        static let null = TypeSet(rawValue: 1 << 6)

        /// In the order messages name them, with their article.
        static let names: [(name: String, type: TypeSet, phrase: String)] = [
            ("object", .object, "an object"), ("array", .array, "an array"), ("string", .string, "a string"),
            ("number", .number, "a number"), ("integer", .integer, "an integer"), ("boolean", .boolean, "a boolean"),
            ("null", .null, "null"),
        ]

        /// Whether `value` is one of these types (an integer is a number with no fraction,
        /// whatever its spelling: 1.0 and 1e2 are integers).
        func admits(_ value: JSONValue) -> Bool {
            switch value {
            case .null: contains(.null)
            case .bool: contains(.boolean)
            case .string: contains(.string)
            case .array: contains(.array)
            case .object: contains(.object)
            case .number(let number):
                contains(.number) || (contains(.integer) && number.rounded(.towardZero) == number)
            }
        }

        /// "a string", "a string or null", "an object, an array or null".
        var phrase: String {
            let phrases = Self.names.filter { contains($0.type) }.map(\.phrase)
            guard phrases.count > 1 else { return phrases.first ?? "nothing" }
            return phrases.dropLast().joined(separator: ", ") + " or " + phrases.last!
        }
    }
}

// MARK: - Compiled keywords

extension ComponentSchema {
    /// One schema object (or boolean schema), its keywords checked and compiled.
    ///
    /// Invariant: `properties` and `required` are sorted in `JSONWriter.precedes` order — the
    /// order of `JSONObject`'s members — so an object is validated in one merge walk.
    final class Compiled: Sendable {
        struct Property: Sendable {
            let name: String
            let schema: Compiled
        }

        /// The `false` schema: no value is valid.
        let rejectsEverything: Bool
        let types: TypeSet?
        let properties: [Property]
        let required: [String]
        /// nil: any other member is allowed.
        let additionalProperties: Compiled?
        let items: Compiled?
        let enumValues: [JSONValue]?
        let constValue: JSONValue?
        let minimum: Double?
        let maximum: Double?
        let minLength: Int?
        let maxLength: Int?
        let pattern: SchemaPattern?

        /// Whether this schema constrains nothing (`true`, `{}`, annotations only).
        let acceptsEverything: Bool
        /// Whether a keyword applies to strings (minLength, maxLength, pattern): others skip them.
        let checksStrings: Bool

        init(_ json: JSONValue, at pointer: JSONPointer) throws(SchemaError) {
            func fail(_ keyword: String?, _ message: String) -> SchemaError {
                SchemaError(pointer: (keyword.map { pointer.appending($0) } ?? pointer).description, message: message)
            }
            let members: JSONObject
            switch json {
            case .bool(let accepts):
                rejectsEverything = !accepts
                members = JSONObject()
            case .object(let object):
                rejectsEverything = false
                members = object
            case .null, .number, .string, .array:
                throw fail(nil, "a schema is an object or a boolean, not \(Self.phrase(json))")
            }
            for (keyword, _) in members
            where !ComponentSchema.keywords.contains(keyword) && !ComponentSchema.annotations.contains(keyword) {
                throw fail(
                    keyword,
                    "\(JSONWriter.string(.string(keyword))) is not supported; the supported keywords are "
                        + ComponentSchema.keywords.joined(separator: ", ") + " (and the annotations "
                        + ComponentSchema.annotations.joined(separator: ", ") + ", which are ignored)")
            }

            types = try Self.types(members["type"], fail: { fail("type", $0) }, at: pointer)

            if let value = members["properties"] {
                guard let object = value.objectValue else {
                    throw fail("properties", "properties must be an object of schemas, not \(Self.phrase(value))")
                }
                guard object.count <= ComponentSchema.maxListed else {
                    throw fail(
                        "properties", "properties names \(object.count) members; at most \(ComponentSchema.maxListed)")
                }
                var properties: [Property] = []
                for (name, schema) in object {
                    properties.append(
                        Property(
                            name: name,
                            schema: try Compiled(schema, at: pointer.appending("properties").appending(name))))
                }
                self.properties = properties  // already in member order
            } else {
                properties = []
            }

            if let value = members["required"] {
                guard let names = value.arrayValue else {
                    throw fail("required", "required must be an array of property names, not \(Self.phrase(value))")
                }
                guard names.count <= ComponentSchema.maxListed else {
                    throw fail("required", "required lists \(names.count) names; at most \(ComponentSchema.maxListed)")
                }
                var required: [String] = []
                for (i, name) in names.enumerated() {
                    guard let text = name.stringValue else {
                        throw SchemaError(
                            pointer: pointer.appending("required").appending(i).description,
                            message: "required lists property names, which are strings, not \(Self.phrase(name))")
                    }
                    guard !required.contains(where: { $0.isScalarEqual(to: text) }) else {
                        throw SchemaError(
                            pointer: pointer.appending("required").appending(i).description,
                            message: "\(JSONWriter.string(name)) is listed twice in required")
                    }
                    required.append(text)
                }
                self.required = required.sorted(by: JSONWriter.precedes)
            } else {
                required = []
            }

            additionalProperties = try members["additionalProperties"].map { value throws(SchemaError) in
                try Compiled(value, at: pointer.appending("additionalProperties"))
            }

            if let value = members["items"] {
                if case .array = value {
                    throw fail("items", "items must be one schema; the array form (prefixItems) is not supported")
                }
                items = try Compiled(value, at: pointer.appending("items"))
            } else {
                items = nil
            }

            if let value = members["enum"] {
                guard let values = value.arrayValue else {
                    throw fail("enum", "enum must be an array of the allowed values, not \(Self.phrase(value))")
                }
                guard !values.isEmpty else { throw fail("enum", "enum lists no values, so no value would be valid") }
                guard values.count <= ComponentSchema.maxListed else {
                    throw fail("enum", "enum lists \(values.count) values; at most \(ComponentSchema.maxListed)")
                }
                enumValues = values
            } else {
                enumValues = nil
            }
            constValue = members["const"]

            func number(_ keyword: String) throws(SchemaError) -> Double? {
                guard let value = members[keyword] else { return nil }
                guard let number = value.numberValue else {
                    throw fail(keyword, "\(keyword) must be a number, not \(Self.phrase(value))")
                }
                return number
            }
            minimum = try number("minimum")
            maximum = try number("maximum")

            func count(_ keyword: String) throws(SchemaError) -> Int? {
                guard let value = members[keyword] else { return nil }
                guard let number = value.numberValue, number >= 0, number.rounded(.towardZero) == number else {
                    throw fail(keyword, "\(keyword) must be a non-negative integer, not \(Self.describe(value))")
                }
                return number < Double(Int.max / 2) ? Int(number) : Int.max / 2
            }
            minLength = try count("minLength")
            maxLength = try count("maxLength")

            if let value = members["pattern"] {
                guard let source = value.stringValue else {
                    throw fail("pattern", "pattern must be a string, not \(Self.phrase(value))")
                }
                do throws(SchemaPattern.SyntaxError) {
                    pattern = try SchemaPattern(source)
                } catch {
                    throw fail("pattern", "the pattern \(Self.describe(value)) cannot be used: \(error.message)")
                }
            } else {
                pattern = nil
            }
            checksStrings = minLength != nil || maxLength != nil || pattern != nil
            acceptsEverything =
                !rejectsEverything && types == nil && properties.isEmpty && required.isEmpty
                && additionalProperties == nil && items == nil && enumValues == nil && constValue == nil
                && minimum == nil && maximum == nil && !checksStrings
        }

        private static func types(
            _ value: JSONValue?, fail: (String) -> SchemaError, at pointer: JSONPointer
        ) throws(SchemaError) -> TypeSet? {
            guard let value else { return nil }
            let allowed = TypeSet.names.map { JSONWriter.string(.string($0.name)) }
            let hint = "use " + allowed.dropLast().joined(separator: ", ") + " or " + allowed.last!
            func type(_ name: JSONValue, at pointer: String) throws(SchemaError) -> TypeSet {
                guard let text = name.stringValue, let entry = TypeSet.names.first(where: { $0.name == text }) else {
                    throw SchemaError(pointer: pointer, message: "\(describe(name)) is not a type name: \(hint)")
                }
                return entry.type
            }
            switch value {
            case .string:
                return try type(value, at: pointer.appending("type").description)
            case .array(let names):
                guard !names.isEmpty else { throw fail("type lists no types: \(hint)") }
                var types: TypeSet = []
                for (i, name) in names.enumerated() {
                    let at = pointer.appending("type").appending(i).description
                    let one = try type(name, at: at)
                    guard !types.contains(one) else {
                        throw SchemaError(pointer: at, message: "\(describe(name)) is listed twice in type")
                    }
                    types.insert(one)
                }
                return types
            case .null, .bool, .number, .object:
                throw fail("type must be a type name or an array of them, not \(phrase(value))")
            }
        }

        // MARK: Validation

        /// Reports `value`'s violations of this schema to `sink`, until it is done; with
        /// `ignoringHubKeys`, an object's hub keys are skipped as if absent (the top of a node).
        ///
        /// Generic over the sink so that one piece of code serves both the check a valid tree
        /// takes (`FirstViolation`: no pointers, no messages, the first violation ends it) and
        /// the listing an invalid one needs (`ViolationList`); each is specialised.
        func validate<Sink: ViolationSink>(_ value: JSONValue, into sink: inout Sink, ignoringHubKeys: Bool) {
            if rejectsEverything {
                sink.report("is not allowed here (the schema here is false)")
                return
            }
            if let types, !types.admits(value) {
                sink.report("must be \(types.phrase), not \(Self.phrase(value, against: types))")
                return  // the other keywords would only repeat that the value is of another type
            }
            if enumValues != nil || constValue != nil {
                // The node as its component sees it: without hub keys (a copy only here, and rare).
                let compared = ignoringHubKeys ? Self.withoutHubKeys(value) : value
                if let enumValues, !enumValues.contains(compared) {
                    sink.report("must be \(Self.oneOf(enumValues)), not \(Self.describe(compared))")
                    if sink.isDone { return }
                }
                if let constValue, constValue != compared {
                    sink.report("must be \(Self.describe(constValue)), not \(Self.describe(compared))")
                    if sink.isDone { return }
                }
            }
            switch value {
            case .number(let number):
                if let minimum, number < minimum {
                    sink.report("must be at least \(Self.describe(.number(minimum))), not \(Self.describe(value))")
                    if sink.isDone { return }
                }
                if let maximum, number > maximum {
                    sink.report("must be at most \(Self.describe(.number(maximum))), not \(Self.describe(value))")
                }
            case .string(let text) where checksStrings:
                validateString(text, into: &sink)
            case .array(let elements):
                guard let items, !items.acceptsEverything else { return }
                for index in elements.indices {
                    sink.enter(index)
                    items.validate(elements[index], into: &sink, ignoringHubKeys: false)
                    sink.leave()
                    if sink.isDone { return }
                }
            case .object(let members):
                validateObject(members, into: &sink, ignoringHubKeys: ignoringHubKeys)
            case .null, .bool, .string:
                break
            }
        }

        private func validateString<Sink: ViolationSink>(_ text: String, into sink: inout Sink) {
            if minLength != nil || maxLength != nil {
                // A scalar is 1 to 4 UTF-8 bytes: the bytes alone decide most strings.
                let bytes = text.utf8.count
                if bytes > (maxLength ?? .max) || (bytes + 3) / 4 < (minLength ?? 0) {
                    let length = Self.scalarCount(text)
                    if let minLength, length < minLength {
                        sink.report(
                            "must be at least \(Self.characters(minLength)) long (Unicode scalars), not \(length)")
                        if sink.isDone { return }
                    }
                    if let maxLength, length > maxLength {
                        sink.report(
                            "must be at most \(Self.characters(maxLength)) long (Unicode scalars), not \(length)")
                        if sink.isDone { return }
                    }
                }
            }
            if let pattern {
                switch pattern.check(text) {
                case true?:
                    break
                case false?:
                    sink.report(
                        "must match the pattern \(Self.describe(.string(pattern.source))), not \(Self.describe(.string(text)))"
                    )
                case nil:
                    sink.report(
                        "is too long (\(text.unicodeScalars.count) characters) to check against the pattern "
                            + "\(Self.describe(.string(pattern.source))) in time: shorten it, or simplify the pattern "
                            + "(fewer counted repetitions or alternatives)")
                }
            }
        }

        /// One walk over the members (sorted) beside `properties` and `required` (sorted alike):
        /// a required name that sorts before the member reached is missing, and reported there.
        private func validateObject<Sink: ViolationSink>(
            _ members: JSONObject, into sink: inout Sink, ignoringHubKeys: Bool
        ) {
            var nextProperty = 0
            var nextRequired = 0
            // Indexing, not iterating: a member is not copied (retained) on the way.
            let list = members.members
            for i in list.indices {
                let name = list[i].key
                if ignoringHubKeys && TreeValidation.isHubKey(name) { continue }
                while nextRequired < required.count {
                    let order = Self.order(required[nextRequired], name)
                    guard order <= 0 else { break }
                    if order < 0 {
                        sink.report("missing required property \(JSONWriter.string(.string(required[nextRequired])))")
                        if sink.isDone { return }
                    }
                    nextRequired += 1
                }
                var schema: Compiled?
                while nextProperty < properties.count {
                    let order = Self.order(properties[nextProperty].name, name)
                    guard order <= 0 else { break }
                    if order == 0 { schema = properties[nextProperty].schema }
                    nextProperty += 1
                }
                if schema == nil, let additionalProperties {
                    guard !additionalProperties.rejectsEverything else {
                        sink.report(
                            "property \(JSONWriter.string(.string(name))) is not allowed (additionalProperties is false)"
                        )
                        if sink.isDone { return }
                        continue
                    }
                    schema = additionalProperties
                }
                guard let schema, !schema.acceptsEverything else { continue }
                sink.enter(name)
                schema.validate(list[i].value, into: &sink, ignoringHubKeys: false)
                sink.leave()
                if sink.isDone { return }
            }
            while nextRequired < required.count {
                sink.report("missing required property \(JSONWriter.string(.string(required[nextRequired])))")
                if sink.isDone { return }
                nextRequired += 1
            }
        }

        /// `a` against `b` in `JSONWriter.precedes` order (UTF-16 code units): negative, 0 (the
        /// same scalars) or positive. UTF-8 bytes decide unless both strings have a non-ASCII
        /// byte at their first difference.
        static func order(_ a: String, _ b: String) -> Int {
            let undecided = 2
            let fast: Int?? = a.utf8.withContiguousStorageIfAvailable { x in
                b.utf8.withContiguousStorageIfAvailable { y -> Int in
                    let count = min(x.count, y.count)
                    var i = 0
                    while i < count && x[i] == y[i] { i += 1 }
                    if i == count { return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1) }
                    if x[i] < 0x80 || y[i] < 0x80 { return x[i] < y[i] ? -1 : 1 }
                    return undecided
                }
            }
            if let decided = fast ?? nil, decided != undecided { return decided }
            if a.isScalarEqual(to: b) { return 0 }
            return JSONWriter.precedes(a, b) ? -1 : 1
        }

        /// Unicode scalars in `text`: its UTF-8 bytes that are not continuation bytes.
        static func scalarCount(_ text: String) -> Int {
            text.utf8.withContiguousStorageIfAvailable { bytes in
                var count = 0
                for byte in bytes where byte & 0xC0 != 0x80 { count += 1 }
                return count
            } ?? text.unicodeScalars.count
        }

        /// `value` without its hub keys when it is an object.
        static func withoutHubKeys(_ value: JSONValue) -> JSONValue {
            guard case .object(var members) = value else { return value }
            for key in TreeValidation.hubKeys { members[key] = nil }
            return .object(members)
        }

        // MARK: Messages

        /// What `value` is, for a type violation: its type with its article, or the number itself
        /// when an integer was asked for (`must be an integer, not 1.5`).
        static func phrase(_ value: JSONValue, against types: TypeSet) -> String {
            if case .number = value, types.contains(.integer) { return describe(value) }
            return phrase(value)
        }

        /// "a string", "an object", "null": the JSON type of `value` with its article.
        static func phrase(_ value: JSONValue) -> String {
            switch value {
            case .null: "null"
            case .bool: "a boolean"
            case .number: "a number"
            case .string: "a string"
            case .array: "an array"
            case .object: "an object"
            }
        }

        /// The value as compact JSON, cut after 60 characters. Combining marks and invisible
        /// format characters are written as `\uXXXX`, so that `"é"` and `"e\u0301"` read apart.
        static func describe(_ value: JSONValue) -> String {
            var text = String.UnicodeScalarView()
            for scalar in JSONWriter.string(value).unicodeScalars.prefix(60) {
                switch scalar.properties.generalCategory {
                case .nonspacingMark, .spacingMark, .enclosingMark, .format:
                    let digits = String(scalar.value, radix: 16)
                    text.append(
                        contentsOf: "\\u\(String(repeating: "0", count: max(0, 4 - digits.count)))\(digits)"
                            .unicodeScalars)
                default:
                    text.append(scalar)
                }
            }
            return String(text) + (JSONWriter.string(value).unicodeScalars.count > 60 ? "…" : "")
        }

        /// "1 character", "3 characters".
        static func characters(_ count: Int) -> String { count == 1 ? "1 character" : "\(count) characters" }

        /// `"a"`, or `one of "a", "b", "c"` (the first ten, then how many more).
        static func oneOf(_ values: [JSONValue]) -> String {
            guard values.count > 1 else { return describe(values[0]) }
            let shown = values.prefix(10).map(describe).joined(separator: ", ")
            return "one of " + shown + (values.count > 10 ? " (and \(values.count - 10) more)" : "")
        }
    }
}
