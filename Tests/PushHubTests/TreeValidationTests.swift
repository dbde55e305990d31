import Testing

@testable import PushHub

@Suite struct TreeValidationTests {
    static func json(_ text: String) -> JSONValue { try! JSONReader.parse(Array(text.utf8)) }

    static func component(_ name: String, _ body: String) -> Component {
        try! Component(name: name, body: json(body))
    }

    /// Carousel 1 and 2, Text 1 (which forbids other members), Spacer (any node).
    static let registry: [String: Component] = [
        "Carousel": component(
            "Carousel",
            #"""
            {"versions":{
              "1":{"schema":{"type":"object","required":["items"],"properties":{"items":{"type":"array","items":{"type":"string"}}}}},
              "2":{"schema":{"required":["items","interval"],"properties":{"interval":{"type":"integer","minimum":1}}}}}}
            """#),
        "Text": component(
            "Text",
            #"{"versions":{"1":{"schema":{"properties":{"text":{"type":"string"},"id":{}},"required":["text"],"additionalProperties":false}}}}"#
        ),
        "Spacer": component("Spacer", #"{"versions":{"1":{}}}"#),
    ]

    /// Violations of `tree` (JSON text) as "pointer: message".
    static func violations(_ tree: String, strict: Bool = false, limit: Int = 100) -> [String] {
        TreeValidation.violations(in: json(tree), components: registry, strict: strict, limit: limit)
            .map { "\($0.pointer): \($0.message)" }
    }

    @Test("a valid tree has no violation; types that are not registered pass through")
    func valid() {
        let tree = #"""
            {"type":"screen","children":[{"type":"Text","text":"hi"},{"type":"Carousel","items":["a","b"]},
             {"type":"Carousel","v":2,"items":[],"interval":3},{"type":"Spacer","anything":[1,{"x":null}]},
             {"type":"Unknown","whatever":1}]}
            """#
        #expect(Self.violations(tree) == [])
    }

    @Test("a node is validated at its pointer, against the schema of its version (v, default 1)")
    func pointers() {
        let tree = #"""
            {"type":"screen","children":[{"type":"Text","text":"hi"},{"type":"Carousel","items":[1]},
             {"type":"Carousel","v":2,"items":[]}]}
            """#
        #expect(
            Self.violations(tree) == [
                "/children/1/items/0: must be a string, not a number",
                #"/children/2: missing required property "interval""#,
            ])
    }

    @Test("hub keys are not the component's data: additionalProperties false does not see them, required cannot")
    func hubKeys() {
        let tree = #"""
            [{"type":"Text","text":"a","v":1,"min_app_version":"5.0.0","fallback":{"type":"Spacer"},"id":"t"},
             {"type":"Text","text":"b","colour":"red"}]
            """#
        #expect(Self.violations(tree) == [#"/1: property "colour" is not allowed (additionalProperties is false)"#])
        #expect(TreeValidation.isHubKey("type") && TreeValidation.isHubKey("v") && TreeValidation.isHubKey("fallback"))
        #expect(
            TreeValidation.isHubKey("min_app_version") && !TreeValidation.isHubKey("id")
                && !TreeValidation.isHubKey("V"))
    }

    @Test("enum and const at a node's top compare the node without its hub keys")
    func enumOfNodes() {
        let registry = [
            "Badge": Self.component(
                "Badge", #"{"versions":{"1":{"schema":{"enum":[{"kind":"new"},{"kind":"sale"}]}}}}"#),
            "Rule": Self.component("Rule", #"{"versions":{"1":{"schema":{"const":{}}}}}"#),
        ]
        let tree = Self.json(
            #"[{"type":"Badge","kind":"sale","v":1},{"type":"Badge","kind":"old"},{"type":"Rule","fallback":null},{"type":"Rule","x":1}]"#
        )
        #expect(
            TreeValidation.violations(in: tree, components: registry, strict: false, limit: 10).map(\.description) == [
                #"/1: must be one of {"kind":"new"}, {"kind":"sale"}, not {"kind":"old"}"#,
                #"/3: must be {}, not {"x":1}"#,
            ])
    }

    @Test("v must be a positive integer naming a registered version")
    func versions() {
        let tree = #"""
            [{"type":"Carousel","v":3,"items":[]},{"type":"Carousel","v":"2"},{"type":"Carousel","v":0},
             {"type":"Carousel","v":1.5},{"type":"Carousel","v":2.0,"items":[],"interval":1},{"type":"Carousel","v":null}]
            """#
        #expect(
            Self.violations(tree) == [
                "/0: Carousel has no version 3 (registered: 1, 2)",
                #"/1: "v" must be a positive integer (the version of Carousel the node needs), not "2""#,
                #"/2: "v" must be a positive integer (the version of Carousel the node needs), not 0"#,
                #"/3: "v" must be a positive integer (the version of Carousel the node needs), not 1.5"#,
                #"/5: "v" must be a positive integer (the version of Carousel the node needs), not null"#,
            ])
    }

    @Test("every object and array is visited: inside fallbacks, inside other nodes' data, arrays of arrays")
    func everywhere() {
        let tree = #"""
            {"type":"screen","children":[
              {"type":"Chart","min_app_version":"6.0.0","fallback":{"type":"Text","text":5}},
              {"type":"Spacer","slots":{"left":{"type":"Text"}}},
              [[{"type":"Text","text":"ok"},{"type":"Carousel","items":"x"}]]]}
            """#
        #expect(
            Self.violations(tree) == [
                "/children/0/fallback/text: must be a string, not a number",
                #"/children/1/slots/left: missing required property "text""#,
                "/children/2/0/1/items: must be an array, not a string",
            ])
    }

    @Test("a node's own violations come before those of the nodes inside it")
    func documentOrder() {
        let tree = #"{"type":"Text","text":1,"children":[{"type":"Text"}]}"#
        #expect(
            Self.violations(tree) == [
                #": property "children" is not allowed (additionalProperties is false)"#,
                "/text: must be a string, not a number",
                #"/children/0: missing required property "text""#,
            ])
    }

    @Test(
        "with strict, a node of an unregistered type is a violation; without, it passes; a non-string type is no node")
    func strict() {
        let tree =
            #"{"type":"screen","children":[{"type":"Text","text":"a"},{"type":"Chart"},{"type":7},{"kind":"x"}]}"#
        let expected = [
            #": "screen" is not a registered component: register it or use a registered type (this hub runs with --strict-components)"#,
            #"/children/1: "Chart" is not a registered component: register it or use a registered type (this hub runs with --strict-components)"#,
        ]
        #expect(Self.violations(tree, strict: true) == expected)
        #expect(Self.violations(tree, strict: false) == [])
        #expect(TreeValidation.violations(in: Self.json(tree), components: [:], strict: true, limit: 10).count == 3)
        #expect(TreeValidation.violations(in: Self.json(tree), components: [:], strict: false, limit: 10) == [])
    }

    @Test("types compare case-sensitively and scalar by scalar (U+212A KELVIN SIGN is not K)")
    func exactTypes() {
        let registry = ["K": Self.component("K", #"{"versions":{"1":{"schema":{"required":["k"]}}}}"#)]
        let tree = Self.json("[{\"type\":\"\u{212A}\"},{\"type\":\"k\"},{\"type\":\"K\"}]")
        let found = TreeValidation.violations(in: tree, components: registry, strict: false, limit: 10)
        #expect(found == [TreeViolation(pointer: "/2", message: #"missing required property "k""#)])
    }

    @Test("violations stop at the limit")
    func limit() {
        let tree = "[" + Array(repeating: #"{"type":"Text"}"#, count: 50).joined(separator: ",") + "]"
        #expect(Self.violations(tree, limit: 7).count == 7)
        #expect(Self.violations(tree, limit: 1000).count == 50)
        #expect(Self.violations(tree, limit: 0).isEmpty)
        let wide = #"[{"type":"Text","text":"x","a":1,"b":2,"c":3}]"#
        #expect(Self.violations(wide, limit: 2).count == 2)
    }

    @Test("a violation's JSON is {pointer, message}; its description puts the pointer first")
    func violationJSON() {
        let violation = TreeViolation(pointer: "/children/1", message: "m")
        #expect(violation.json == Self.json(#"{"pointer":"/children/1","message":"m"}"#))
        #expect(violation.description == "/children/1: m")
        #expect(TreeViolation(pointer: "", message: "m").description == "(root): m")
    }
}

@Suite struct ComponentTests {
    static func json(_ text: String) -> JSONValue { try! JSONReader.parse(Array(text.utf8)) }

    static func refusal(_ body: String) -> InputError? { refusal(named: "Carousel", body) }

    static func refusal(named name: String, _ body: String) -> InputError? {
        do {
            _ = try Component(name: name, body: json(body))
            return nil
        } catch {
            return error
        }
    }

    @Test("a PUT body becomes versions with compiled schemas; json answers name and versions")
    func accepted() throws {
        let component = try Component(
            name: "Carousel",
            body: Self.json(#"{"versions":{"2":{"schema":{"type":"object"}},"10":{"schema":true},"1":{}}}"#))
        #expect(component.name == "Carousel")
        #expect(component.sortedVersions == [1, 2, 10])
        #expect(component.versions[2]?.json == Self.json(#"{"type":"object"}"#))
        #expect(
            component.json
                == Self.json(
                    #"{"name":"Carousel","versions":{"1":{"schema":true},"2":{"schema":{"type":"object"}},"10":{"schema":true}}}"#
                ))
        // What json answers, minus the name, registers the same component again.
        var body = try #require(component.json.objectValue)
        body["name"] = nil
        #expect(try Component(name: "Carousel", body: .object(body)) == component)
    }

    @Test("a version without a schema accepts any node")
    func noSchema() throws {
        let component = try Component(name: "Spacer", body: Self.json(#"{"versions":{"1":{}}}"#))
        #expect(component.versions[1]?.isValid(Self.json(#"{"anything":[1,2]}"#)) == true)
    }

    @Test("names are 1 to 100 of A-Z a-z 0-9 . _ -")
    func names() {
        for name in ["Carousel", "a", "x.y_z-9", String(repeating: "N", count: 100)] {
            #expect(Self.refusal(named: name, #"{"versions":{"1":{}}}"#) == nil, "\(name)")
        }
        for name in ["", "a b", "é", "a/b", String(repeating: "N", count: 101)] {
            #expect(Self.refusal(named: name, #"{"versions":{"1":{}}}"#)?.code == "bad_component", "\(name)")
        }
        #expect(
            Component.nameError("a b") == #"a component name is 1 to 100 of A-Z a-z 0-9 . _ - (got "a b")"#)
    }

    @Test("version keys are 1 to 1000 without leading zeros")
    func versionKeys() {
        #expect(["1", "9", "10", "999", "1000"].map(Component.version(fromKey:)) == [1, 9, 10, 999, 1000])
        for key in ["0", "01", "1001", "-1", "+1", "1.0", "1e2", "", "x", " 1", "10000", "١"] {
            #expect(Component.version(fromKey: key) == nil, "\(key)")
            #expect(Self.refusal(#"{"versions":{"\#(key)":{}}}"#)?.code == "bad_component", "\(key)")
        }
        #expect(
            Self.refusal(#"{"versions":{"01":{}}}"#)?.message
                == #"version "01" is not a version number: use an integer from 1 to 1000 without leading zeros"#)
    }

    /// A bad body and its refusal's code and message.
    static let badBodies: [(String, String, String)] = [
        ("[]", "bad_component", #"the body must be an object {"versions":{"1":{"schema":{…}}}}, not an array"#),
        (
            #"{"versions":{"1":{}},"name":"x"}"#, "bad_component",
            #"unknown member "name" in the body; it holds only "versions""#
        ),
        ("{}", "bad_component", #"the body has no "versions": list them as {"versions":{"1":{"schema":{…}}}}"#),
        (
            #"{"versions":[]}"#, "bad_component",
            #""versions" must be an object keyed by version ("1", "2", …), not an array"#
        ),
        (#"{"versions":{}}"#, "bad_component", #""versions" lists no version; register at least "1""#),
        (#"{"versions":{"1":true}}"#, "bad_component", #"version "1" must be an object {"schema":{…}}, not a boolean"#),
        (
            #"{"versions":{"1":{"schema":{},"clients":3}}}"#, "bad_component",
            #"unknown member "clients" in version "1"; a version holds only "schema""#
        ),
        (
            #"{"versions":{"1":{},"2":{"schema":{"properties":{"items":{"type":"list"}}}}}}"#, "bad_schema",
            #"/versions/2/schema/properties/items/type: "list" is not a type name: use "object", "array", "string", "number", "integer", "boolean" or "null""#
        ),
        (
            #"{"versions":{"1":{"schema":[]}}}"#, "bad_schema",
            "/versions/1/schema: a schema is an object or a boolean, not an array"
        ),
        (
            #"{"versions":{"1":{"schema":{"required":["text","type"]}}}}"#, "bad_schema",
            #"/versions/1/schema/required/1: "type" is a hub key (type, v, fallback, min_app_version), removed from a node before it is validated, so it cannot be required"#
        ),
    ]

    @Test(
        "a bad body is refused with bad_component naming the member, a bad schema with bad_schema and its pointer",
        arguments: badBodies.indices)
    func refused(_ index: Int) {
        let (body, code, message) = Self.badBodies[index]
        #expect(Self.refusal(body) == InputError(code, message), "\(body)")
    }

    @Test("components are equal when registered from equal bodies")
    func equality() throws {
        let a = try Component(
            name: "A", body: Self.json(#"{"versions":{"1":{"schema":{"minimum":1,"type":"number"}}}}"#))
        let b = try Component(
            name: "A", body: Self.json(#"{"versions":{"1":{"schema":{"type":"number","minimum":1.0}}}}"#))
        let c = try Component(name: "A", body: Self.json(#"{"versions":{"1":{"schema":{"type":"number"}}}}"#))
        #expect(a == b && a != c)
    }
}
