import TestSupport
import Testing

@testable import PushHub

@Suite struct KeyedMergePatchTests {
    static func json(_ text: String) -> JSONValue { try! JSONReader.parse(text) }

    static let screen = #"""
        {"title":"Hi","children":[{"id":"hero","type":"Image","src":"a.png"},
         {"id":"cta","type":"Button","txt":"Buy","style":{"color":"red"}},{"id":"foot","type":"Text"}]}
        """#

    /// RFC 7386 Appendix A: (target, patch, result).
    static let rfc7386: [(target: String, patch: String, result: String)] = [
        (##"{"a":"b"}"##, ##"{"a":"c"}"##, ##"{"a":"c"}"##),
        (##"{"a":"b"}"##, ##"{"b":"c"}"##, ##"{"a":"b","b":"c"}"##),
        (##"{"a":"b"}"##, ##"{"a":null}"##, ##"{}"##),
        (##"{"a":"b","b":"c"}"##, ##"{"a":null}"##, ##"{"b":"c"}"##),
        (##"{"a":["b"]}"##, ##"{"a":"c"}"##, ##"{"a":"c"}"##),
        (##"{"a":"c"}"##, ##"{"a":["b"]}"##, ##"{"a":["b"]}"##),
        (##"{"a":{"b":"c"}}"##, ##"{"a":{"b":"d","c":null}}"##, ##"{"a":{"b":"d"}}"##),
        (##"{"a":[{"b":"c"}]}"##, ##"{"a":[1]}"##, ##"{"a":[1]}"##),
        (##"["a","b"]"##, ##"["c","d"]"##, ##"["c","d"]"##),
        (##"{"a":"b"}"##, ##"["c"]"##, ##"["c"]"##),
        (##"{"a":"foo"}"##, "null", "null"),
        (##"{"a":"foo"}"##, ##""bar""##, ##""bar""##),
        (##"{"e":null}"##, ##"{"a":1}"##, ##"{"e":null,"a":1}"##),
        (##"[1,2]"##, ##"{"a":"b","c":null}"##, ##"{"a":"b"}"##),
        (##"{}"##, ##"{"a":{"bb":{"ccc":null}}}"##, ##"{"a":{"bb":{}}}"##),
    ]

    @Test("a patch without marks applies as RFC 7386 does (its Appendix A)", arguments: rfc7386)
    func rfcAppendix(_ example: (target: String, patch: String, result: String)) {
        let (target, patch) = (Self.json(example.target), Self.json(example.patch))
        #expect(KeyedMergePatch.apply(patch, to: target) == Self.json(example.result))
        #expect(KeyedMergePatch.apply(patch, to: target) == MergePatch.apply(patch, to: target))
    }

    /// (what it shows, base, patch, result).
    static let applied: [(what: String, base: String, patch: String, result: String)] = [
        (
            "one keyed child changes, its siblings stay", screen,
            ##"{"children":{"#cta":{"txt":"Buy now","style":{"color":null}}}}"##,
            ##"{"title":"Hi","children":[{"id":"hero","type":"Image","src":"a.png"},{"id":"cta","type":"Button","txt":"Buy now","style":{}},{"id":"foot","type":"Text"}]}"##
        ),
        (
            "null removes a child", screen, ##"{"children":{"#hero":null}}"##,
            ##"{"title":"Hi","children":[{"id":"cta","type":"Button","txt":"Buy","style":{"color":"red"}},{"id":"foot","type":"Text"}]}"##
        ),
        (
            "+#id appends the whole child with its id, nulls kept as written", ##"{"c":[{"id":"a"}]}"##,
            ##"{"c":{"+#b":{"type":"Badge","n":null}}}"##,
            ##"{"c":[{"id":"a"},{"id":"b","type":"Badge","n":null}]}"##
        ),
        (
            "additions append in member-name order after the changes", ##"{"c":[{"id":"a"},{"id":"m"}]}"##,
            ##"{"c":{"+#z":{},"+#b":{},"#a":null}}"##,
            ##"{"c":[{"id":"m"},{"id":"b"},{"id":"z"}]}"##
        ),
        (
            "a #id no longer in the base is skipped", screen, ##"{"children":{"#gone":{"x":1},"#foot":{"x":2}}}"##,
            ##"{"title":"Hi","children":[{"id":"hero","type":"Image","src":"a.png"},{"id":"cta","type":"Button","txt":"Buy","style":{"color":"red"}},{"id":"foot","type":"Text","x":2}]}"##
        ),
        (
            "a +#id that now exists is merged into it", ##"{"c":[{"id":"a","x":1,"y":2}]}"##,
            ##"{"c":{"+#a":{"x":9,"y":null}}}"##,
            ##"{"c":[{"id":"a","x":9}]}"##
        ),
        (
            "a +#id that now exists with null removes it", ##"{"c":[{"id":"a"},{"id":"b"}]}"##,
            ##"{"c":{"+#a":null}}"##, ##"{"c":[{"id":"b"}]}"##
        ),
        (
            "+#id whose value names another id gets the selector's id", ##"{"c":[]}"##,
            ##"{"c":{"+#a":{"id":"zz","k":1}}}"##,
            ##"{"c":[{"id":"a","k":1}]}"##
        ),
        (
            "+#id with a non-object value adds nothing", ##"{"c":[{"id":"a"}]}"##, ##"{"c":{"+#b":"x"}}"##,
            ##"{"c":[{"id":"a"}]}"##
        ),
        (
            "nested keyed selectors", ##"{"c":[{"id":"list","c":[{"id":"i1","v":1},{"id":"i2","v":1}]},{"id":"x"}]}"##,
            ##"{"c":{"#list":{"c":{"#i2":{"v":2},"+#i3":{"v":3}}}}}"##,
            ##"{"c":[{"id":"list","c":[{"id":"i1","v":1},{"id":"i2","v":2},{"id":"i3","v":3}]},{"id":"x"}]}"##
        ),
        (
            "a non-object value replaces the child", ##"{"c":[{"id":"a"},{"id":"b"}]}"##, ##"{"c":{"#a":"plain"}}"##,
            ##"{"c":["plain",{"id":"b"}]}"##
        ),
        (
            "a duplicated id selects its first child", ##"{"c":[{"id":"d","n":1},{"id":"d","n":2}]}"##,
            ##"{"c":{"#d":{"n":0}}}"##,
            ##"{"c":[{"id":"d","n":0},{"id":"d","n":2}]}"##
        ),
        (
            "elements without ids are left alone", ##"{"c":[1,{"id":"a"},{"id":7},{"k":1}]}"##,
            ##"{"c":{"#a":{"x":1},"#7":null}}"##,
            ##"{"c":[1,{"id":"a","x":1},{"id":7},{"k":1}]}"##
        ),
        (
            "an object mixing selectors and keys replaces the array (RFC 7386)", ##"{"c":[{"id":"a"}]}"##,
            ##"{"c":{"#a":{"x":1},"k":2}}"##,
            ##"{"c":{"#a":{"x":1},"k":2}}"##
        ),
        ("an empty object replaces the array (RFC 7386)", ##"{"c":[{"id":"a"}]}"##, ##"{"c":{}}"##, ##"{"c":{}}"##),
        ("an array replaces the array", screen, ##"{"children":[]}"##, ##"{"title":"Hi","children":[]}"##),
        (
            "+key adds a key, its value taken literally", ##"{"a":1}"##, ##"{"+b":{"x":null,"+y":1}}"##,
            ##"{"a":1,"b":{"x":null,"+y":1}}"##
        ),
        (
            "+key that now exists is replaced, not merged", ##"{"a":{"x":1,"y":2}}"##, ##"{"+a":{"x":3}}"##,
            ##"{"a":{"x":3}}"##
        ),
        (
            "a plain key the base no longer has is added", ##"{"a":1}"##, ##"{"b":{"c":{"d":null,"e":1}}}"##,
            ##"{"a":1,"b":{"c":{"e":1}}}"##
        ),
        (
            "a selector object whose array vanished is skipped", ##"{"a":1}"##,
            ##"{"children":{"#cta":{"txt":"x"},"+#n":{}}}"##, ##"{"a":1}"##
        ),
        (
            "a selector object whose base is a string is skipped", ##"{"c":"s"}"##, ##"{"c":{"#a":{"x":1}}}"##,
            ##"{"c":"s"}"##
        ),
        ("a selector object on null leaves null", ##"{"c":null}"##, ##"{"c":{"#a":1}}"##, ##"{"c":null}"##),
        (
            "against an object, #x is a key: it merges", ##"{"o":{"#x":{"a":1}}}"##, ##"{"o":{"#x":{"b":2}}}"##,
            ##"{"o":{"#x":{"a":1,"b":2}}}"##
        ),
        ("+#x adds the key \"#x\" to an object", ##"{"o":{}}"##, ##"{"o":{"+#x":1}}"##, ##"{"o":{"#x":1}}"##),
        ("++x adds the key \"+x\"", ##"{}"##, ##"{"++x":1}"##, ##"{"+x":1}"##),
        ("root: a non-object patch replaces the base", screen, ##"[1]"##, ##"[1]"##),
        (
            "root: an object patch on an array base makes an object", ##"[1,2]"##, ##"{"+a":1,"b":2}"##,
            ##"{"a":1,"b":2}"##
        ),
        (
            "root: a selector object on an array base", ##"[{"id":"a"}]"##, ##"{"#a":{"v":1}}"##,
            ##"[{"id":"a","v":1}]"##
        ),
        (
            "unicode ids match scalar by scalar", ##"{"c":[{"id":"caf\u00e9"},{"id":"cafe\u0301"},{"id":"日本"}]}"##,
            ##"{"c":{"#cafe\u0301":{"v":2},"#日本":{"v":3},"+#🙂":{}}}"##,
            ##"{"c":[{"id":"caf\u00e9"},{"id":"cafe\u0301","v":2},{"id":"日本","v":3},{"id":"🙂"}]}"##
        ),
        ("a mark followed by a combining mark is still the mark", ##"{}"##, ##"{"+\u0301x":1}"##, ##"{"\u0301x":1}"##),
    ]

    @Test("variant patches apply", arguments: applied)
    func applies(_ example: (what: String, base: String, patch: String, result: String)) {
        let result = KeyedMergePatch.apply(Self.json(example.patch), to: Self.json(example.base))
        #expect(result == Self.json(example.result), "\(example.what): \(JSONWriter.string(result))")
    }

    /// (what it shows, base, patch, [(path, message)]).
    static let checked: [(what: String, base: String, patch: String, expected: [(String, String)])] = [
        (
            "a patch that names only what the base has is fine", screen,
            ##"{"title":"Yo","children":{"#cta":{"txt":"x","style":{"color":null}},"#foot":null,"+#new":{"id":"new"}},"+sub":1}"##,
            []
        ),
        (
            "a plain key the base lacks", screen, ##"{"children":{"#cta":{"txt":"x","text":"y"}}}"##,
            [("/children/#cta/text", ##"the base has no key "text" here; write "+text" to add it"##)]
        ),
        (
            "an id the array lacks", screen, ##"{"children":{"#cta2":{"txt":"x"}}}"##,
            [("/children/#cta2", ##"no child with id "cta2" in this array; write "+#cta2" to add one"##)]
        ),
        (
            "an addition the base already has", screen, ##"{"+title":"x","children":{"+#cta":{}}}"##,
            [
                ("/+title", ##""+title" adds a key the base already has; write "title" to change it"##),
                (
                    "/children/+#cta",
                    ##""+#cta" adds a child with id "cta" but the array already has one; write "#cta" to change it"##
                ),
            ]
        ),
        (
            "removing a key the base lacks", ##"{"a":1}"##, ##"{"b":null}"##,
            [("/b", ##"the base has no key "b" to remove"##)]
        ),
        (
            "every problem, not just the first", screen,
            ##"{"titel":"x","children":{"#a":{},"#b":null,"#cta":{"tx":1}},"+title":2}"##,
            [
                ("/+title", ##""+title" adds a key the base already has; write "title" to change it"##),
                ("/children/#a", ##"no child with id "a" in this array; write "+#a" to add one"##),
                ("/children/#b", ##"no child with id "b" in this array; write "+#b" to add one"##),
                ("/children/#cta/tx", ##"the base has no key "tx" here; write "+tx" to add it"##),
                ("/titel", ##"the base has no key "titel" here; write "+titel" to add it"##),
            ]
        ),
        (
            "a selector object where the base is a string", ##"{"c":"s"}"##, ##"{"c":{"#a":1}}"##,
            [
                (
                    "/c",
                    ##""#id" members select children of an array of objects with ids; the base value here is a string"##
                )
            ]
        ),
        (
            "a #x key where the base is an object", ##"{"c":{}}"##, ##"{"c":{"#a":1}}"##,
            [
                (
                    "/c/#a",
                    ##"the base has no key "#a" here; write "+#a" to add it ("#id" selects a child only in an array of objects with ids)"##
                )
            ]
        ),
        (
            "an array without ids", ##"{"c":[1,2]}"##, ##"{"c":{"#a":1}}"##,
            [
                (
                    "/c/#a",
                    ##"no child with id "a" in this array (its elements have no string "id"); write "+#a" to add one"##
                )
            ]
        ),
        (
            "a mixed object against an array", ##"{"c":[{"id":"a"}]}"##, ##"{"c":{"#a":{},"k":1}}"##,
            [
                (
                    "/c/#a",
                    ##"the base value here is an array, not an object, so it has no key "#a"; write "+#a" to add it (a selector object holds only "#id" and "+#id" members)"##
                ),
                (
                    "/c/k",
                    ##"the base value here is an array, not an object, so it has no key "k"; write "+k" to add it"##
                ),
            ]
        ),
        (
            "an object patch where the base is a number", ##"{"n":1}"##, ##"{"n":{"a":1,"+b":2}}"##,
            [("/n/a", ##"the base value here is a number, not an object, so it has no key "a"; write "+a" to add it"##)]
        ),
        (
            "duplicate ids in the base array", ##"{"c":[{"id":"d"},{"id":"d"},{"id":"e"},{"id":"e"}]}"##,
            ##"{"c":{"#d":{"+x":1}}}"##,
            [("/c/#d", ##"the base array has 2 children with id "d"; "#d" changes only the first"##)]
        ),
        (
            "a new child that is not an object", ##"{"c":[]}"##, ##"{"c":{"+#a":[1]}}"##,
            [("/c/+#a", "a new child must be an object; this is an array")]
        ),
        (
            "a new child whose id differs", ##"{"c":[]}"##, ##"{"c":{"+#a":{"id":"b"},"+#n":{"id":3}}}"##,
            [
                ("/c/+#a", ##"the new child's "id" is "b", not "a"; leave it out or make them equal"##),
                ("/c/+#n", ##"the new child's "id" is 3, not "n"; leave it out or make them equal"##),
            ]
        ),
        (
            "an addition of null", ##"{"c":[]}"##, ##"{"+k":null,"c":{"+#a":null}}"##,
            [
                ("/+k", ##""+k": null adds nothing; give the new value"##),
                ("/c/+#a", "a new child must be an object; this is a null"),
            ]
        ),
        (
            "nested keyed selectors are checked all the way down", ##"{"c":[{"id":"l","c":[{"id":"i","v":1}]}]}"##,
            ##"{"c":{"#l":{"c":{"#i":{"w":2},"#j":{}}}}}"##,
            [
                ("/c/#l/c/#i/w", ##"the base has no key "w" here; write "+w" to add it"##),
                ("/c/#l/c/#j", ##"no child with id "j" in this array; write "+#j" to add one"##),
            ]
        ),
        (
            "paths escape ~ and / (RFC 6901)", ##"{"c":[]}"##, ##"{"a/b":1,"c":{"#x~y":{}}}"##,
            [
                ("/a~1b", ##"the base has no key "a/b" here; write "+a/b" to add it"##),
                (
                    "/c/#x~0y",
                    ##"no child with id "x~y" in this array (its elements have no string "id"); write "+#x~y" to add one"##
                ),
            ]
        ),
        (
            "unicode ids compare scalar by scalar", ##"{"c":[{"id":"caf\u00e9"}]}"##, ##"{"c":{"#cafe\u0301":{}}}"##,
            [("/c/#cafe\u{301}", "no child with id \"cafe\u{301}\" in this array; write \"+#cafe\u{301}\" to add one")]
        ),
        (
            "a non-object patch names nothing; additions are not looked into", screen,
            ##"{"children":[1],"title":{"+x":{"+y":null}}}"##, []
        ),
    ]

    @Test("problems lists every key or id the base lacks and every addition it has", arguments: checked)
    func problems(_ example: (what: String, base: String, patch: String, expected: [(String, String)])) {
        let found = KeyedMergePatch.problems(in: Self.json(example.patch), against: Self.json(example.base))
        let expected = example.expected.map { KeyedMergePatch.Problem(path: $0.0, message: $0.1) }
        #expect(found == expected, "\(example.what)")
    }

    @Test("for random bases and random patches without marks, apply == MergePatch.apply")
    func equivalentWithoutMarks() {
        var generator = SeededGenerator(state: 7386)
        for round in 0..<3000 {
            let base = Self.randomValue(depth: 4, using: &generator)
            let patch = Self.randomPatch(against: base, depth: 4, using: &generator)
            let keyed = KeyedMergePatch.apply(patch, to: base)
            let plain = MergePatch.apply(patch, to: base)
            #expect(keyed == plain, "round \(round): \(JSONWriter.string(patch)) on \(JSONWriter.string(base))")
            if keyed != plain { return }
        }
    }

    @Test("a patch without problems keeps what it does not name (random keyed arrays)")
    func selectorsTouchOnlyTheirChild() {
        var generator = SeededGenerator(state: 26)
        for _ in 0..<500 {
            let ids = (0..<Int.random(in: 1...6, using: &generator)).map { "k\($0)" }
            let children = ids.map {
                JSONValue.object(["id": .string($0), "v": Self.randomValue(depth: 2, using: &generator)])
            }
            let target = ids.randomElement(using: &generator)!
            let patch = JSONValue.object(["#" + target: .object(["v": .string("changed")])])
            #expect(KeyedMergePatch.problems(in: patch, against: .array(children)).isEmpty)
            let result = KeyedMergePatch.apply(patch, to: .array(children)).arrayValue!
            #expect(result.count == children.count)
            for (before, after) in zip(children, result) where before["id"]!.stringValue != target {
                #expect(before == after)
            }
        }
    }

    // MARK: Random trees without marks

    static let keys = ["a", "b", "c", "id", "é", "x/y"]

    static func randomValue(depth: Int, using generator: inout SeededGenerator) -> JSONValue {
        let pick = Int.random(in: 0..<(depth > 0 ? 8 : 5), using: &generator)
        switch pick {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .number(Double(Int.random(in: -3...3, using: &generator)))
        case 3: return .string(keys.randomElement(using: &generator)!)
        case 4: return .string("s")
        case 5:
            return .array(
                (0..<Int.random(in: 0...3, using: &generator)).map { i in
                    Bool.random(using: &generator)
                        ? .object(["id": .string("k\(i)"), "v": randomValue(depth: depth - 2, using: &generator)])
                        : randomValue(depth: depth - 1, using: &generator)
                })
        default:
            var members = JSONObject()
            for key in keys where Int.random(in: 0..<3, using: &generator) == 0 {
                members[key] = randomValue(depth: depth - 1, using: &generator)
            }
            return .object(members)
        }
    }

    /// An object patch mostly naming the base's keys (so merges go deep), sometimes anything.
    static func randomPatch(against base: JSONValue, depth: Int, using generator: inout SeededGenerator) -> JSONValue {
        guard depth > 0, Int.random(in: 0..<5, using: &generator) > 0 else {
            return randomValue(depth: depth, using: &generator)
        }
        var changes = JSONObject()
        for key in keys where Int.random(in: 0..<2, using: &generator) == 0 {
            changes[key] =
                Int.random(in: 0..<4, using: &generator) == 0
                ? .null : randomPatch(against: base[key] ?? .null, depth: depth - 1, using: &generator)
        }
        return .object(changes)
    }
}
