import Testing

@testable import PushHub

@Suite struct ComponentSchemaTests {
    static func json(_ text: String) -> JSONValue { try! JSONReader.parse(Array(text.utf8)) }

    static func schema(_ text: String) -> ComponentSchema { try! ComponentSchema(json: json(text)) }

    /// Every violation of `value` (JSON text) against `schema` (JSON text), as "pointer: message".
    static func violations(_ schema: String, _ value: String, limit: Int = 100) -> [String] {
        var found: [TreeViolation] = []
        Self.schema(schema).validate(json(value), at: JSONPointer(), into: &found, limit: limit)
        return found.map { "\($0.pointer): \($0.message)" }
    }

    static func isValid(_ schema: String, _ value: String) -> Bool { violations(schema, value).isEmpty }

    /// The refusal of a schema, as "pointer: message".
    static func refusal(_ schema: String) -> String? {
        do {
            _ = try ComponentSchema(json: json(schema))
            return nil
        } catch {
            return "\(error.pointer): \(error.message)"
        }
    }

    // MARK: type

    @Test("properties, required and enum have at most 1000 entries")
    func listLimits() {
        func listed(_ count: Int, _ make: (Int) -> String) -> String { (0..<count).map(make).joined(separator: ",") }
        #expect(Self.refusal(#"{"enum":[\#(listed(1000) { "\($0)" })]}"#) == nil)
        #expect(Self.refusal(#"{"enum":[\#(listed(1001) { "\($0)" })]}"#)?.contains("at most 1000") == true)
        #expect(Self.refusal(#"{"required":[\#(listed(1001) { "\"p\($0)\"" })]}"#)?.contains("at most 1000") == true)
        #expect(Self.refusal(#"{"properties":{\#(listed(1001) { "\"p\($0)\":{}" })}}"#)?.contains("at most 1000") == true)
    }

    @Test("a string too long to check against a pattern without a DFA is a violation that says so")
    func patternBudget() {
        let long = "\"" + String(repeating: "a", count: 10_000) + "\""
        let found = Self.violations(#"{"pattern":"[ab]{0,1000}c"}"#, long)
        #expect(found.count == 1 && found[0].contains("too long (10000 characters) to check"), "\(found)")
        #expect(Self.isValid(#"{"pattern":"[ab]{0,1000}c"}"#, #""aabc""#))
    }

    @Test("type: each of the seven names admits its own values only")
    func typeNames() {
        let values = [
            "object": #"{}"#, "array": "[]", "string": #""x""#, "number": "1.5", "boolean": "true", "null": "null",
        ]
        for (name, _) in values {
            for (other, value) in values {
                #expect(Self.isValid(#"{"type":"\#(name)"}"#, value) == (name == other), "\(name) vs \(value)")
            }
        }
        #expect(Self.isValid(#"{"type":"number"}"#, "3"))
        #expect(!Self.isValid(#"{"type":"integer"}"#, "1.5"))
        #expect(!Self.isValid(#"{"type":"integer"}"#, #""1""#))
    }

    @Test("type integer: a number without fraction, however it is written (2020-12: 1.0 is an integer)")
    func integers() {
        for value in ["1", "1.0", "-0", "1e2", "1E+2", "-5", "9007199254740993", "1e308", "100.000"] {
            #expect(Self.isValid(#"{"type":"integer"}"#, value), "\(value)")
        }
        for value in ["1.5", "-0.1", "1e-2", "4.000000001"] {
            #expect(!Self.isValid(#"{"type":"integer"}"#, value), "\(value)")
        }
        #expect(Self.violations(#"{"type":"integer"}"#, "1.5") == [": must be an integer, not 1.5"])
        #expect(Self.violations(#"{"type":"integer"}"#, #""7""#) == [": must be an integer, not a string"])
    }

    @Test("type as an array admits any of its names, and the message lists them")
    func typeArrays() {
        #expect(Self.isValid(#"{"type":["string","null"]}"#, "null"))
        #expect(Self.isValid(#"{"type":["string","null"]}"#, #""a""#))
        #expect(Self.violations(#"{"type":"string"}"#, "3") == [": must be a string, not a number"])
        #expect(Self.violations(#"{"type":["string","null"]}"#, "3") == [": must be a string or null, not a number"])
        #expect(
            Self.violations(#"{"type":["null","array","object"]}"#, "true")
                == [": must be an object, an array or null, not a boolean"])
        #expect(
            Self.violations(#"{"type":["integer","string"]}"#, "0.5") == [": must be a string or an integer, not 0.5"])
        #expect(Self.isValid(#"{"type":["integer","string"]}"#, "2.0"))
    }

    @Test("a type violation is the only one reported there: the value's other keywords are not piled on")
    func typeStopsThere() {
        #expect(
            Self.violations(#"{"type":"string","enum":["a"],"minLength":3}"#, "5") == [
                ": must be a string, not a number"
            ])
    }

    // MARK: properties, required, additionalProperties

    @Test("properties validate their members, at the member's pointer; other members are free")
    func properties() {
        let schema = #"{"properties":{"title":{"type":"string"},"count":{"type":"integer","minimum":0}}}"#
        #expect(Self.isValid(schema, #"{"title":"a","count":2,"other":[1]}"#))
        #expect(Self.isValid(schema, "{}"))
        #expect(
            Self.violations(schema, #"{"title":7,"count":-1}"#)
                == ["/count: must be at least 0, not -1", "/title: must be a string, not a number"])
        #expect(Self.isValid(schema, "[1]"), "properties say nothing about an array")
    }

    @Test("nested properties and items: the pointer is the path through them, escaped as RFC 6901 says")
    func nested() {
        let schema = #"""
            {"properties":{"a/b":{"properties":{"c~d":{"items":{"properties":{"x":{"type":"boolean"}}}}}}}}
            """#
        #expect(
            Self.violations(schema, #"{"a/b":{"c~d":[{"x":true},{"x":1},{"x":false},{"x":"no"}]}}"#)
                == [
                    "/a~1b/c~0d/1/x: must be a boolean, not a number",
                    "/a~1b/c~0d/3/x: must be a boolean, not a string",
                ])
    }

    @Test("required: each missing name is one violation at the object")
    func required() {
        let schema = #"{"required":["items","title"]}"#
        #expect(Self.isValid(schema, #"{"items":[],"title":null}"#))
        #expect(Self.violations(schema, #"{"title":"x"}"#) == [#": missing required property "items""#])
        #expect(
            Self.violations(schema, #"{}"#)
                == [#": missing required property "items""#, #": missing required property "title""#])
        #expect(Self.isValid(schema, #""not an object""#))
        #expect(Self.isValid(#"{"required":[]}"#, "{}"))
    }

    @Test("required compares names scalar by scalar: é is not e + U+0301")
    func requiredScalars() {
        #expect(Self.isValid(#"{"required":["é"]}"#, #"{"é":1}"#))
        #expect(!Self.isValid(#"{"required":["é"]}"#, "{\"e\u{301}\":1}"))
    }

    @Test("additionalProperties false: each member not in properties is one violation naming it")
    func additionalFalse() {
        let schema = #"{"properties":{"color":{"type":"string"}},"additionalProperties":false}"#
        #expect(Self.isValid(schema, #"{"color":"red"}"#))
        #expect(
            Self.violations(schema, #"{"color":"red","colour":"red","size":1}"#)
                == [
                    #": property "colour" is not allowed (additionalProperties is false)"#,
                    #": property "size" is not allowed (additionalProperties is false)"#,
                ])
    }

    @Test("additionalProperties as a schema validates every member not in properties")
    func additionalSchema() {
        let schema = #"{"properties":{"id":{"type":"string"}},"additionalProperties":{"type":"number"}}"#
        #expect(Self.isValid(schema, #"{"id":"x","a":1,"b":2.5}"#))
        #expect(Self.violations(schema, #"{"id":"x","a":"1"}"#) == ["/a: must be a number, not a string"])
        #expect(Self.isValid(#"{"additionalProperties":true}"#, #"{"a":1}"#))
    }

    @Test(
        "properties, additionalProperties and required in one walk, in member order (a missing name where it would sort)"
    )
    func oneWalk() {
        let schema = #"""
            {"properties":{"z":{"const":1},"a":{"const":2},"é":{"const":3},"\uD83D\uDE00":{"const":4},"\uFFFF":{"const":5}},
             "required":["\uFFFF","z","a"],"additionalProperties":false}
            """#
        #expect(Self.isValid(schema, #"{"\uFFFF":5,"\uD83D\uDE00":4,"é":3,"a":2,"z":1}"#))
        #expect(
            Self.violations(schema, #"{"b":0,"z":1,"\uFFFF":5,"\uD83D\uDE00":0}"#)
                == [
                    #": missing required property "a""#,
                    #": property "b" is not allowed (additionalProperties is false)"#, "/😀: must be 4, not 0",
                ])
    }

    // MARK: items

    @Test("items validates each element at its index")
    func items() {
        let schema = #"{"type":"array","items":{"type":"string","maxLength":2}}"#
        #expect(Self.isValid(schema, "[]"))
        #expect(Self.isValid(schema, #"["a","bc"]"#))
        #expect(
            Self.violations(schema, #"["a","bcd",3]"#)
                == [
                    "/1: must be at most 2 characters long (Unicode scalars), not 3",
                    "/2: must be a string, not a number",
                ])
        #expect(Self.isValid(#"{"items":{"type":"string"}}"#, #"{"0":1}"#), "items says nothing about an object")
    }

    // MARK: enum, const

    @Test("enum: JSON equality — numbers by value, member order irrelevant, booleans are not numbers")
    func enumEquality() {
        let schema = #"{"enum":[1,"a",{"x":1,"y":[true,null]},[1,2],null,false]}"#
        for value in ["1", "1.0", "1e0", #""a""#, #"{"y":[true,null],"x":1}"#, "[1,2]", "[1.0,2e0]", "null", "false"] {
            #expect(Self.isValid(schema, value), "\(value)")
        }
        for value in ["true", "0", #""A""#, #"{"x":1}"#, #"{"x":1,"y":[true,null],"z":0}"#, "[2,1]", "[1]", #""1""#] {
            #expect(!Self.isValid(schema, value), "\(value)")
        }
        #expect(!Self.isValid(#"{"enum":[1]}"#, "true"))
        #expect(!Self.isValid(#"{"enum":[0]}"#, "false"))
        #expect(Self.isValid(#"{"enum":["é"]}"#, #""\u00e9""#))
        #expect(!Self.isValid(#"{"enum":["é"]}"#, "\"e\u{301}\""))
    }

    @Test("enum and const messages show the allowed values and the value found")
    func enumMessages() {
        #expect(
            Self.violations(#"{"enum":["primary","secondary"]}"#, #""tertiary""#) == [
                #": must be one of "primary", "secondary", not "tertiary""#
            ])
        #expect(Self.violations(#"{"enum":["only"]}"#, "3") == [#": must be "only", not 3"#])
        #expect(
            Self.violations(#"{"enum":[1,2,3,4,5,6,7,8,9,10,11,12]}"#, "0")
                == [": must be one of 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 (and 2 more), not 0"])
        #expect(Self.violations(#"{"const":{"a":[1]}}"#, #"{"a":[2]}"#) == [#": must be {"a":[1]}, not {"a":[2]}"#])
        let long = String(repeating: "x", count: 100)
        #expect(
            Self.violations(#"{"const":"y"}"#, "\"\(long)\"")
                == [#": must be "y", not "\#(String(repeating: "x", count: 59))…"#])
    }

    @Test("messages write combining marks and format characters escaped, so that look-alikes read apart")
    func lookAlikes() {
        #expect(Self.violations(#"{"const":"é"}"#, "\"e\u{301}\"") == [#": must be "é", not "e\u0301""#])
        #expect(Self.violations(#"{"enum":["a"]}"#, "\"a\u{FEFF}\"") == [#": must be "a", not "a\ufeff""#])
        #expect(
            Self.violations(#"{"maxLength":0}"#, #""x""#) == [
                ": must be at most 0 characters long (Unicode scalars), not 1"
            ])
        #expect(
            Self.violations(#"{"minLength":1}"#, #""""#) == [
                ": must be at least 1 character long (Unicode scalars), not 0"
            ])
    }

    @Test("const: one value, JSON equality")
    func const() {
        #expect(Self.isValid(#"{"const":2}"#, "2.0"))
        #expect(!Self.isValid(#"{"const":2}"#, "2.5"))
        #expect(Self.isValid(#"{"const":null}"#, "null"))
        #expect(!Self.isValid(#"{"const":null}"#, "false"))
        #expect(Self.isValid(#"{"const":{"b":1,"a":2}}"#, #"{"a":2,"b":1}"#))
        #expect(!Self.isValid(#"{"const":[1,2]}"#, "[2,1]"))
    }

    // MARK: minimum, maximum

    @Test("minimum and maximum are inclusive and apply to numbers only")
    func bounds() {
        let schema = #"{"minimum":-1.5,"maximum":10}"#
        for value in ["-1.5", "0", "10", "10.0", #""100""#, "[100]"] {
            #expect(Self.isValid(schema, value), "\(value)")
        }
        #expect(Self.violations(schema, "-2") == [": must be at least -1.5, not -2"])
        #expect(Self.violations(schema, "10.000001") == [": must be at most 10, not 10.000001"])
        #expect(Self.violations(#"{"minimum":1e21}"#, "1") == [": must be at least 1e+21, not 1"])
    }

    // MARK: minLength, maxLength

    @Test("minLength and maxLength count Unicode scalars and apply to strings only")
    func lengths() {
        let schema = #"{"minLength":2,"maxLength":3}"#
        for value in [#""ab""#, #""abc""#, #""😀😀""#, "\"e\u{301}\"", #""é!""#, "7", "[]"] {
            #expect(Self.isValid(schema, value), "\(value)")
        }
        #expect(Self.violations(schema, #""😀""#) == [": must be at least 2 characters long (Unicode scalars), not 1"])
        #expect(
            Self.violations(schema, "\"e\u{301}e\u{301}\"") == [
                ": must be at most 3 characters long (Unicode scalars), not 4"
            ])
        #expect(Self.isValid(#"{"maxLength":0}"#, #""""#))
        // Many bytes, few scalars: a length is never read off the UTF-8 bytes.
        #expect(!Self.isValid(#"{"minLength":2}"#, #""😀""#))
        #expect(!Self.isValid(#"{"minLength":2}"#, #""é""#))
        #expect(Self.isValid(#"{"maxLength":1}"#, #""😀""#))
        #expect(Self.isValid(#"{"minLength":1.0}"#, #""a""#), "a count written 1.0 is the integer 1")
    }

    // MARK: pattern

    @Test("pattern searches the string (unanchored) and applies to strings only")
    func pattern() {
        #expect(Self.isValid(#"{"pattern":"b"}"#, #""abc""#))
        #expect(Self.isValid(#"{"pattern":"^a"}"#, "5"))
        #expect(
            Self.violations(#"{"pattern":"^[a-z]+$"}"#, #""ABC""#) == [
                #": must match the pattern "^[a-z]+$", not "ABC""#
            ])
        #expect(Self.isValid(##"{"pattern":"^#[0-9a-f]{6}$"}"##, ##""#00ff00""##))
    }

    // MARK: boolean schemas, annotations, several keywords

    @Test("true and false are schemas: everything, nothing")
    func booleanSchemas() {
        #expect(Self.isValid("true", #"{"a":1}"#))
        #expect(Self.violations("false", "1") == [": is not allowed here (the schema here is false)"])
        #expect(
            Self.violations(#"{"properties":{"a":false}}"#, #"{"a":1}"#) == [
                "/a: is not allowed here (the schema here is false)"
            ])
        #expect(Self.violations(#"{"items":false}"#, "[1]") == ["/0: is not allowed here (the schema here is false)"])
        #expect(Self.isValid(#"{"items":false}"#, "[]"))
    }

    @Test("annotations are accepted and change nothing")
    func annotations() {
        let schema = #"""
            {"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"urn:x","$comment":"c","title":"T",
             "description":"D","default":5,"examples":[1,"x"],"type":"integer"}
            """#
        #expect(Self.isValid(schema, "3"))
        #expect(!Self.isValid(schema, #""x""#))
    }

    @Test("every keyword of a value is checked: several violations at one place")
    func several() {
        #expect(
            Self.violations(#"{"minLength":5,"pattern":"^\\d+$","enum":["123456"]}"#, #""ab""#)
                == [
                    #": must be "123456", not "ab""#, ": must be at least 5 characters long (Unicode scalars), not 2",
                    #": must match the pattern "^\\d+$", not "ab""#,
                ])
    }

    @Test("validation stops appending at the limit, and pointers start at the given one")
    func limitAndBase() {
        let schema = Self.schema(#"{"items":{"type":"string"}}"#)
        var found: [TreeViolation] = []
        schema.validate(Self.json("[1,2,3,4]"), at: JSONPointer(["children", "a/b"]), into: &found, limit: 2)
        #expect(found.map(\.pointer) == ["/children/a~1b/0", "/children/a~1b/1"])
        found = [TreeViolation(pointer: "/x", message: "earlier")]
        schema.validate(Self.json("[1,2,3,4]"), at: JSONPointer(), into: &found, limit: 3)
        #expect(found.count == 3)
        #expect(found[0].json == Self.json(#"{"pointer":"/x","message":"earlier"}"#))
    }

    @Test("a schema equals another registered from the same JSON")
    func equality() {
        #expect(Self.schema(#"{"type":"string","pattern":"a"}"#) == Self.schema(#"{"pattern":"a","type":"string"}"#))
        #expect(Self.schema(#"{"type":"string"}"#) != Self.schema(#"{"type":"number"}"#))
        #expect(Self.schema(#"{"minimum":1}"#).json == Self.json(#"{"minimum":1.0}"#))
    }

    // MARK: refusals

    @Test("an unknown keyword is refused, named, with the supported ones listed")
    func unknownKeyword() {
        #expect(
            Self.refusal(#"{"properties":{"a":{"oneOf":[]}}}"#)
                == #"/properties/a/oneOf: "oneOf" is not supported; the supported keywords are type, properties, required, additionalProperties, items, enum, const, minimum, maximum, minLength, maxLength, pattern (and the annotations $schema, $id, $comment, title, description, default, examples, which are ignored)"#
        )
        for keyword in [
            "$ref", "$defs", "allOf", "anyOf", "not", "if", "format", "exclusiveMinimum", "multipleOf", "minItems",
            "uniqueItems", "patternProperties", "prefixItems", "minProperties", "dependentRequired", "TYPE",
        ] {
            #expect(
                Self.refusal(#"{"\#(keyword)":1}"#)?.hasPrefix("/\(keyword): \"\(keyword)\" is not supported") == true)
        }
    }

    /// A malformed schema and the start of its refusal.
    static let malformed: [(String, String)] = [
        ("1", #": a schema is an object or a boolean, not a number"#),
        (#"{"items":"x"}"#, #"/items: a schema is an object or a boolean, not a string"#),
        (
            #"{"type":"str"}"#,
            #"/type: "str" is not a type name: use "object", "array", "string", "number", "integer", "boolean" or "null""#
        ),
        (#"{"type":["string","Null"]}"#, #"/type/1: "Null" is not a type name"#),
        (#"{"type":["string","string"]}"#, #"/type/1: "string" is listed twice in type"#),
        (#"{"type":[]}"#, "/type: type lists no types"),
        (#"{"type":3}"#, "/type: type must be a type name or an array of them, not a number"),
        (#"{"properties":[]}"#, "/properties: properties must be an object of schemas, not an array"),
        (#"{"properties":{"a":{"type":"x"}}}"#, #"/properties/a/type: "x" is not a type name"#),
        (#"{"required":"a"}"#, "/required: required must be an array of property names, not a string"),
        (#"{"required":["a",1]}"#, "/required/1: required lists property names, which are strings, not a number"),
        (#"{"required":["a","a"]}"#, #"/required/1: "a" is listed twice in required"#),
        (
            #"{"additionalProperties":{"minimum":"0"}}"#,
            "/additionalProperties/minimum: minimum must be a number, not a string"
        ),
        (#"{"items":[{}]}"#, "/items: items must be one schema; the array form (prefixItems) is not supported"),
        (#"{"items":{"items":null}}"#, "/items/items: a schema is an object or a boolean, not null"),
        (#"{"enum":{}}"#, "/enum: enum must be an array of the allowed values, not an object"),
        (#"{"enum":[]}"#, "/enum: enum lists no values, so no value would be valid"),
        (#"{"maximum":true}"#, "/maximum: maximum must be a number, not a boolean"),
        (#"{"minLength":-1}"#, "/minLength: minLength must be a non-negative integer, not -1"),
        (#"{"maxLength":1.5}"#, "/maxLength: maxLength must be a non-negative integer, not 1.5"),
        (#"{"maxLength":"3"}"#, #"/maxLength: maxLength must be a non-negative integer, not "3""#),
        (#"{"pattern":1}"#, "/pattern: pattern must be a string, not a number"),
        (
            #"{"pattern":"(?=a)"}"#,
            #"/pattern: the pattern "(?=a)" cannot be used: lookahead (?= is not supported (at offset 0)"#
        ),
        (
            #"{"properties":{"x":{"pattern":"a{2,1}"}}}"#,
            "/properties/x/pattern: the pattern \"a{2,1}\" cannot be used: {2,1}"
        ),
    ]

    @Test("a malformed keyword is refused at its pointer, saying what is wrong", arguments: malformed.indices)
    func refused(_ index: Int) {
        let (schema, expected) = Self.malformed[index]
        let refusal = Self.refusal(schema)
        #expect(refusal?.hasPrefix(expected) == true, "\(schema): \(refusal ?? "accepted")")
    }

    @Test("SchemaError's description puts the pointer first")
    func errorDescription() {
        #expect(SchemaError(pointer: "/type", message: "m").description == "/type: m")
        #expect(SchemaError(pointer: "", message: "m").description == "m")
    }
}
