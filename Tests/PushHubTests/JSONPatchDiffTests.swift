import TestSupport
import Testing

@testable import PushHub

@Suite struct JSONPatchDiffTests {
    static func json(_ text: String) -> JSONValue { try! JSONReader.parse(text) }

    static func ops(_ a: String, _ b: String) -> String { JSONWriter.string(JSONPatchDiff.diff(json(a), json(b)).json) }

    @Test("one changed leaf is one replace, deep inside a keyed child")
    func oneLeaf() {
        let a =
            #"{"type":"screen","children":[{"id":"h","type":"header","title":"A"},{"id":"b","type":"list","items":[{"id":"x","label":"old"}]}]}"#
        let b =
            #"{"type":"screen","children":[{"id":"h","type":"header","title":"A"},{"id":"b","type":"list","items":[{"id":"x","label":"new"}]}]}"#
        #expect(Self.ops(a, b) == #"[{"op":"replace","path":"/children/1/items/0/label","value":"new"}]"#)
    }

    @Test("an insertion into a keyed list is one add; a removal one remove")
    func keyedInsertRemove() {
        #expect(
            Self.ops(#"[{"id":"a"},{"id":"c"}]"#, #"[{"id":"a"},{"id":"b"},{"id":"c"}]"#)
                == #"[{"op":"add","path":"/1","value":{"id":"b"}}]"#)
        #expect(
            Self.ops(#"[{"id":"a"},{"id":"b"},{"id":"c"}]"#, #"[{"id":"a"},{"id":"c"}]"#)
                == #"[{"op":"remove","path":"/1"}]"#)
    }

    @Test("a reordering is moves only: the last child to the front is one move, the first to the end too")
    func reorder() {
        let abcd = #"[{"id":"a","v":1},{"id":"b","v":2},{"id":"c","v":3},{"id":"d","v":4}]"#
        #expect(
            Self.ops(abcd, #"[{"id":"d","v":4},{"id":"a","v":1},{"id":"b","v":2},{"id":"c","v":3}]"#)
                == #"[{"from":"/3","op":"move","path":"/0"}]"#)
        #expect(
            Self.ops(abcd, #"[{"id":"b","v":2},{"id":"c","v":3},{"id":"d","v":4},{"id":"a","v":1}]"#)
                == #"[{"from":"/0","op":"move","path":"/3"}]"#)
        #expect(
            Self.ops(abcd, #"[{"id":"b","v":2},{"id":"a","v":9},{"id":"c","v":3},{"id":"d","v":4}]"#)
                == #"[{"from":"/0","op":"move","path":"/1"},{"op":"replace","path":"/1/v","value":9}]"#)
    }

    @Test("objects: removed, added and changed members; type changes replace")
    func objects() {
        #expect(
            Self.ops(#"{"a":1,"b":2}"#, #"{"b":3,"c":4}"#)
                == #"[{"op":"remove","path":"/a"},{"op":"replace","path":"/b","value":3},{"op":"add","path":"/c","value":4}]"#
        )
        #expect(Self.ops(#"{"a":[1]}"#, #"{"a":{"x":1}}"#) == #"[{"op":"replace","path":"/a","value":{"x":1}}]"#)
        #expect(Self.ops(#"{"a~b/c":1}"#, #"{"a~b/c":2}"#) == #"[{"op":"replace","path":"/a~0b~1c","value":2}]"#)
        #expect(Self.ops(#"{"a":1}"#, #"{"a":1}"#) == "[]")
    }

    @Test("unkeyed arrays keep their common ends")
    func positional() {
        #expect(Self.ops("[1,2,3,4]", "[1,2,9,3,4]") == #"[{"op":"add","path":"/2","value":9}]"#)
        #expect(Self.ops("[1,2,3,4]", "[1,4]") == #"[{"op":"remove","path":"/2"},{"op":"remove","path":"/1"}]"#)
    }

    @Test("a string or id that changes only its Unicode normalization is replaced (found by the json-diff fuzzer)")
    func normalization() throws {
        let a = Self.json(#"{"s":"\u00e9","k":[{"id":"\u00e9"},{"id":"b"}]}"#)
        let b = Self.json(#"{"s":"e\u0301","k":[{"id":"e\u0301"},{"id":"b"}]}"#)
        let patch = JSONPatchDiff.diff(a, b)
        #expect(patch.operations.count == 2)
        #expect(JSONWriter.write(try patch.apply(to: a)) == JSONWriter.write(b))
    }

    @Test("apply follows RFC 6902 and refuses bad paths")
    func apply() throws {
        let document = Self.json(#"{"a":[1,2],"b":{"c":1}}"#)
        let patch = try JSONPatch(
            json: Self.json(
                #"""
                [{"op":"add","path":"/a/-","value":3},{"op":"copy","from":"/b","path":"/d"},{"op":"move","from":"/a/0","path":"/b/e"},
                 {"op":"test","path":"/a","value":[2,3]},{"op":"replace","path":"/b/c","value":null}]
                """#))
        #expect(try patch.apply(to: document) == Self.json(#"{"a":[2,3],"b":{"c":null,"e":1},"d":{"c":1}}"#))
        for bad in [
            #"[{"op":"remove","path":"/x"}]"#, #"[{"op":"add","path":"/a/5","value":1}]"#,
            #"[{"op":"test","path":"/a","value":1}]"#,
            #"[{"op":"move","from":"/b","path":"/b/c/d"}]"#, #"[{"op":"add","path":"/a/01","value":1}]"#,
        ] {
            #expect(throws: JSONPatch.ApplyError.self) { try JSONPatch(json: Self.json(bad)).apply(to: document) }
        }
    }

    /// Seeded random trees: nested objects and arrays, keyed and unkeyed children.
    struct TreeGenerator {
        var rng: SeededGenerator

        mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }

        mutating func leaf() -> JSONValue {
            switch int(0...5) {
            case 0: .null
            case 1: .bool(int(0...1) == 1)
            case 2: .number(Double(int(-1000...1000)) / 4)
            case 3: .string(["", "a", "b", "κόσμε", "x/y", "m~n", "\"q\""][int(0...6)])
            case 4: .number(Double(int(0...5)))
            default: .string("s\(int(0...9))")
            }
        }

        mutating func tree(depth: Int) -> JSONValue {
            if depth == 0 || int(0...3) == 0 { return leaf() }
            switch int(0...2) {
            case 0:
                var members = JSONObject()
                for _ in 0..<int(0...4) { members["k\(int(0...6))"] = tree(depth: depth - 1) }
                return .object(members)
            case 1:
                return .array((0..<int(0...4)).map { _ in tree(depth: depth - 1) })
            default:
                var ids = Array(0..<8).map { "id\($0)" }
                ids.shuffle(using: &rng)
                return .array(
                    ids.prefix(int(0...6)).map { id in
                        .object(["id": .string(id), "type": .string("card"), "body": tree(depth: depth - 1)])
                    })
            }
        }

        /// A random edit of `value`: change leaves, insert, delete, reorder, change types.
        mutating func mutate(_ value: JSONValue, depth: Int) -> JSONValue {
            if int(0...5) == 0 { return tree(depth: depth) }
            switch value {
            case .object(var members):
                for key in members.keys.sorted() where int(0...2) == 0 {
                    members[key] = mutate(members[key]!, depth: depth - 1)
                }
                if int(0...3) == 0, let key = members.keys.sorted().first { members[key] = nil }
                if int(0...3) == 0 { members["n\(int(0...3))"] = tree(depth: 2) }
                return .object(members)
            case .array(var elements):
                for i in elements.indices where int(0...2) == 0 {
                    if case .object(var child) = elements[i], child["id"] != nil, let body = child["body"] {
                        child["body"] = mutate(body, depth: depth - 1)
                        elements[i] = .object(child)
                    } else {
                        elements[i] = mutate(elements[i], depth: depth - 1)
                    }
                }
                if int(0...2) == 0 { elements.shuffle(using: &rng) }
                if int(0...3) == 0 && !elements.isEmpty { elements.remove(at: int(0...(elements.count - 1))) }
                if int(0...3) == 0 {
                    let fresh: JSONValue =
                        keysOf(elements) != nil
                        ? .object(["id": .string("new\(int(0...99))"), "type": .string("card"), "body": leaf()])
                        : leaf()
                    if keysOf(elements + [fresh]) != nil || keysOf(elements) == nil {
                        elements.insert(fresh, at: int(0...elements.count))
                    }
                }
                return .array(elements)
            default:
                return int(0...1) == 0 ? leaf() : value
            }
        }

        func keysOf(_ elements: [JSONValue]) -> [String]? { JSONPatchDiff.keys(elements) }
    }

    @Test("property: apply(diff(a, b), a) == b for 10,000 seeded random pairs")
    func property() throws {
        var generator = TreeGenerator(rng: SeededGenerator(state: 6902))
        var operationCount = 0
        for _ in 0..<10_000 {
            let a = generator.tree(depth: 5)
            let b = generator.mutate(a, depth: 5)
            let patch = JSONPatchDiff.diff(a, b)
            operationCount += patch.operations.count
            let applied = try patch.apply(to: a)
            #expect(
                applied == b,
                "a=\(JSONWriter.string(a)) b=\(JSONWriter.string(b)) patch=\(JSONWriter.string(patch.json))")
            if applied != b { break }
            // The patch also survives its own JSON form.
            #expect(try JSONPatch(json: JSONReader.parse(JSONWriter.write(patch.json))) == patch)
        }
        #expect(operationCount > 10_000)
    }
}
