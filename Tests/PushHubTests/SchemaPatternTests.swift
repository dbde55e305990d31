import Foundation
import TestSupport
import Testing

@testable import PushHub

@Suite struct SchemaPatternTests {
    /// A pattern, strings it matches somewhere, strings it does not.
    struct Case: Sendable, CustomStringConvertible {
        var pattern: String
        var matching: [String]
        var failing: [String]
        var description: String { pattern }
    }

    static func pattern(_ source: String) -> SchemaPattern { try! SchemaPattern(source) }

    /// Checks both matchers (the DFA when there is one, and the NFA simulation).
    static func check(_ c: Case) throws {
        let compiled = try SchemaPattern(c.pattern)
        for text in c.matching {
            #expect(compiled.matches(text), "\(c.pattern) should match \(text.debugDescription)")
            #expect(compiled.matchesBySimulation(text), "\(c.pattern) (NFA) should match \(text.debugDescription)")
        }
        for text in c.failing {
            #expect(!compiled.matches(text), "\(c.pattern) should not match \(text.debugDescription)")
            #expect(!compiled.matchesBySimulation(text), "\(c.pattern) (NFA) should not match \(text.debugDescription)")
        }
    }

    static let literals: [Case] = [
        Case(pattern: "abc", matching: ["abc", "xxabcxx", "abcabc"], failing: ["", "ab", "acb", "ABC"]),
        Case(pattern: "", matching: ["", "anything"], failing: []),
        Case(pattern: "é", matching: ["café"], failing: ["cafe", "cafe\u{301}"]),
        Case(pattern: "😀x", matching: ["a😀x"], failing: ["😀", "x"]),
        Case(pattern: "a/b", matching: ["a/b"], failing: ["ab"]),
    ]

    @Test("literal scalars match anywhere in the string (an unanchored search), scalar by scalar", arguments: literals)
    func literal(_ c: Case) throws { try Self.check(c) }

    static let escapes: [Case] = [
        Case(pattern: #"\d"#, matching: ["a1", "0", "9"], failing: ["", "abc", "٣", "/", ":"]),  // ASCII digits only
        Case(pattern: #"^\D+$"#, matching: ["abc", "٣"], failing: ["a1"]),
        Case(pattern: #"^\w+$"#, matching: ["a_Z9"], failing: ["a-b", "é"]),
        Case(pattern: #"\W"#, matching: ["a-b", "é", "@", "[", "`", "{", "/", ":"], failing: ["a_Z9", "azAZ09_"]),
        Case(
            pattern: #"\s"#, matching: ["a b", "\t", "\n", "\u{A0}", "\u{2003}", "\u{FEFF}", "\u{3000}"],
            failing: ["ab", "\u{85}"]),
        Case(pattern: #"^\S+$"#, matching: ["ab", "\u{85}"], failing: ["a b", "a\u{2028}"]),
        Case(pattern: #"a\nb"#, matching: ["a\nb"], failing: ["anb", "a\\nb"]),
        Case(pattern: #"\t\r\f\v"#, matching: ["\t\r\u{0C}\u{0B}"], failing: ["trfv"]),
        Case(pattern: #"\u00e9"#, matching: ["café"], failing: ["cafe"]),
        Case(pattern: #"\uD83D\uDE00"#, matching: ["a😀"], failing: ["\u{FFFD}"]),  // a pair is one scalar
        Case(pattern: #"\x41\x7a"#, matching: ["Az"], failing: ["x41"]),
        Case(pattern: #"\0"#, matching: ["a\u{0}"], failing: ["0"]),
        Case(pattern: #"\cJ"#, matching: ["\n"], failing: ["cJ"]),
        Case(pattern: #"^\.\*\+\?\(\)\[\]\{\}\|\^\$\\\/\-$"#, matching: [#".*+?()[]{}|^$\/-"#], failing: ["x"]),
    ]

    @Test("escapes: ECMA-262's ASCII \\d and \\w, its Unicode \\s, control and code unit escapes", arguments: escapes)
    func escape(_ c: Case) throws { try Self.check(c) }

    static let dots: [Case] = [
        Case(
            pattern: "a.c", matching: ["abc", "a c", "a😀c", "a\u{85}c"],
            failing: ["ac", "a\nc", "a\rc", "a\u{2028}c", "a\u{2029}c"]),
        Case(pattern: "^.$", matching: ["é", "😀"], failing: ["e\u{301}", ""]),  // one scalar, not one Character
    ]

    @Test(". is any scalar but a line terminator", arguments: dots)
    func dot(_ c: Case) throws { try Self.check(c) }

    static let classes: [Case] = [
        Case(pattern: "^[abc]+$", matching: ["abcba"], failing: ["abd", ""]),
        Case(pattern: "^[a-z0-9]+$", matching: ["a0z9"], failing: ["A", "a-b"]),
        Case(pattern: "^[^a-z]+$", matching: ["ABC", "9-", "é"], failing: ["aB"]),
        Case(pattern: "^[-a]+$", matching: ["-a-"], failing: ["b"]),
        Case(pattern: "^[a-]+$", matching: ["-a-"], failing: ["b"]),
        Case(pattern: "^[a-c-e]+$", matching: ["a-e", "b"], failing: ["d"]),  // a hyphen after a range is literal
        Case(pattern: #"^[\d\s]+$"#, matching: ["1 2"], failing: ["1a"]),
        Case(pattern: #"^[^\d]+$"#, matching: ["ab"], failing: ["a1"]),
        Case(pattern: #"^[\w.-]+@[\w-]+\.[a-z]{2,}$"#, matching: ["a.b-c@x-y.org"], failing: ["a@b.c", "@x.org"]),
        Case(pattern: #"^[\b]$"#, matching: ["\u{8}"], failing: ["b"]),  // \b in a class is a backspace
        Case(pattern: #"^[\-\]\\]+$"#, matching: [#"-]\"#], failing: ["a"]),
        Case(pattern: "^[[(.*]+$", matching: ["[(.*"], failing: ["a"]),
        Case(pattern: "^[é-ë]$", matching: ["ê"], failing: ["e", "ì"]),
        Case(pattern: #"^[\u0041-\u005A]+$"#, matching: ["AZ"], failing: ["a"]),
        Case(pattern: "^[😀-😂]$", matching: ["😁"], failing: ["😃"]),
        Case(pattern: "[]", matching: [], failing: ["", "a", "]"]),  // ECMA-262: the empty class matches nothing
        Case(pattern: "^[^]$", matching: ["a", "\n"], failing: ["", "ab"]),  // and its negation anything
    ]

    @Test("classes: ranges, negation, escapes, a hyphen first or last is literal", arguments: classes)
    func characterClass(_ c: Case) throws { try Self.check(c) }

    static let anchors: [Case] = [
        Case(pattern: "^ab", matching: ["abc"], failing: ["cab"]),
        Case(pattern: "ab$", matching: ["cab"], failing: ["abc", "ab\n"]),  // no multiline: $ is only the end
        Case(pattern: "^$", matching: [""], failing: ["a", "\n"]),
        Case(pattern: "a^b", matching: [], failing: ["ab", "a^b"]),
        Case(pattern: "$^", matching: [""], failing: ["a"]),
        Case(pattern: "^a|b$", matching: ["ax", "xb"], failing: ["xa", "bx"]),
        Case(pattern: #"\bcat\b"#, matching: ["a cat.", "cat"], failing: ["cats", "concat"]),
        Case(pattern: #"\Bcat"#, matching: ["concat"], failing: ["cat", "a cat"]),
        Case(pattern: #"é\b"#, matching: ["éa"], failing: ["é", "é "]),  // é is not an ECMA-262 word character
        Case(pattern: #"a\b"#, matching: ["a", "a é"], failing: ["ab", "a_"]),
    ]

    @Test(
        "anchors ^ and $ hold only at the ends of the string; \\b and \\B use ASCII word characters", arguments: anchors
    )
    func anchor(_ c: Case) throws { try Self.check(c) }

    static let groups: [Case] = [
        Case(pattern: "^(ab)+$", matching: ["ab", "abab"], failing: ["aba", ""]),
        Case(pattern: "^(?:ab|cd)+$", matching: ["abcdab"], failing: ["abc"]),
        Case(pattern: "^(a|b|)$", matching: ["a", "b", ""], failing: ["ab"]),
        Case(pattern: "cat|dog", matching: ["hotdog", "cats"], failing: ["cow"]),
        Case(pattern: "^(?:(a)|b)(c|d(e))$", matching: ["ac", "bde"], failing: ["ad", "abc"]),
        Case(pattern: "^()$", matching: [""], failing: ["a"]),
        Case(pattern: "^(((a)))$", matching: ["a"], failing: ["aa"]),
    ]

    @Test("groups and alternation", arguments: groups)
    func group(_ c: Case) throws { try Self.check(c) }

    static let quantifiers: [Case] = [
        Case(pattern: "^ab*c$", matching: ["ac", "abc", "abbbc"], failing: ["abb"]),
        Case(pattern: "^ab+c$", matching: ["abc", "abbc"], failing: ["ac"]),
        Case(pattern: "^ab?c$", matching: ["ac", "abc"], failing: ["abbc"]),
        Case(pattern: "^a{3}$", matching: ["aaa"], failing: ["aa", "aaaa"]),
        Case(pattern: "^a{2,}$", matching: ["aa", "aaaaaa"], failing: ["a"]),
        Case(pattern: "^a{2,4}$", matching: ["aa", "aaa", "aaaa"], failing: ["a", "aaaaa"]),
        Case(pattern: "^a{0}b$", matching: ["b"], failing: ["ab"]),
        Case(pattern: "^a{0,0}$", matching: [""], failing: ["a"]),
        Case(pattern: "^(ab){2}$", matching: ["abab"], failing: ["ab", "ababab"]),
        Case(pattern: "^a*?b+?c??d{1,2}?$", matching: ["bd", "aabbcdd"], failing: ["abcddd"]),  // lazy: same strings
        Case(pattern: "^#[0-9a-fA-F]{6}$", matching: ["#00ff7F"], failing: ["#00ff7", "00ff7F0"]),
        Case(pattern: "^(a*)*$", matching: ["", "aaa"], failing: ["ab"]),  // an empty loop ends
        Case(pattern: "^(a?){3}a{3}$", matching: ["aaa", "aaaaaa"], failing: ["aaaaaaa"]),
        Case(
            pattern: "^x{1000}$", matching: [String(repeating: "x", count: 1000)],
            failing: [String(repeating: "x", count: 999)]),
    ]

    @Test("quantifiers * + ? {n} {n,} {n,m} and their lazy forms", arguments: quantifiers)
    func quantifier(_ c: Case) throws { try Self.check(c) }

    /// A refused pattern and a word its message must contain.
    static let refusals: [(String, String)] = [
        (#"(a)\1"#, "backreference"),
        (#"(?<n>a)\k<n>"#, "named groups"),
        (#"\k<n>"#, "named backreference"),
        ("a(?=b)", "lookahead"),
        ("a(?!b)", "lookahead"),
        ("(?<=a)b", "lookbehind"),
        ("(?<!a)b", "lookbehind"),
        ("(?<name>a)", "named groups"),
        ("(?P<name>a)", "named groups"),
        ("(?i)a", "inline flags"),
        (#"\p{L}"#, "Unicode property"),
        (#"\P{L}"#, "Unicode property"),
        (#"\01"#, "octal"),
        (#"\u{1F600}"#, #"\u{…}"#),
        (#"\uD800"#, "lone surrogate"),
        (#"\uDC00"#, "lone surrogate"),
        (#"\uD800\u0041"#, "lone surrogate"),
        (#"\u12"#, "four hex digits"),
        (#"\xG1"#, "two hex digits"),
        (#"\c1"#, #"\c"#),
        (#"\A"#, #"\A is not a supported escape"#),
        (#"\Z"#, #"\Z is not a supported escape"#),
        (#"\e"#, #"\e is not a supported escape"#),
        (#"\é"#, #"\é is not a supported escape"#),
        (#"a\"#, "lone \\"),
        ("*a", "nothing to repeat"),
        ("a|+", "nothing to repeat"),
        ("(*)", "nothing to repeat"),
        ("{2}", "nothing to repeat"),
        ("a**", "cannot follow another"),
        ("a{2}{3}", "cannot follow another"),
        ("a*??", "cannot follow another"),
        ("^*", "assertion"),
        ("$+", "assertion"),
        (#"\b{2}"#, "assertion"),
        ("a{", "must be escaped as \\{"),
        ("a{,3}", "must be escaped as \\{"),
        ("a{x}", "must be escaped as \\{"),
        ("{", "must be escaped as \\{"),
        ("a}", "lone }"),
        ("a]", "lone ]"),
        ("a{3,2}", "out of order"),
        ("[z-a]", "out of order"),
        (#"[\d-z]"#, "class escape"),
        (#"[a-\w]"#, "class escape"),
        (#"[\B]"#, #"\B"#),
        ("[abc", "no matching ]"),
        ("(abc", "no matching )"),
        ("abc)", "unmatched )"),
        ("a{1001}", "1000"),
        ("a{1,1001}", "1000"),
        ("a{99999999999999999999}", "1000"),
        ("(a{1000}){20}", "states"),
        (String(repeating: "(", count: 101) + String(repeating: ")", count: 101), "nest"),
        (String(repeating: "a", count: 1001), "at most 1000"),
    ]

    @Test("unsupported constructs and limits are refused with a message naming them", arguments: refusals.indices)
    func refused(_ index: Int) {
        let (source, word) = Self.refusals[index]
        do {
            _ = try SchemaPattern(source)
            Issue.record("\(source) was accepted")
        } catch {
            #expect(error.message.contains(word), "\(source): \(error.message)")
            #expect((0...source.unicodeScalars.count).contains(error.offset))
        }
    }

    @Test("the offset in a refusal is where the construct starts, in scalars")
    func offsets() {
        #expect(throws: SchemaPattern.SyntaxError(offset: 4, message: "lookahead (?= is not supported (at offset 4)")) {
            try SchemaPattern("éabc(?=x)")
        }
        #expect(
            throws: SchemaPattern.SyntaxError(
                offset: 2, message: #"backreferences (\1) are not supported (at offset 2)"#)
        ) {
            try SchemaPattern(#"()\1"#)
        }
    }

    @Test("limits: 1000 scalars, counts up to 1000, nesting up to 100 groups are accepted")
    func limitsAccepted() throws {
        _ = try SchemaPattern(String(repeating: "a", count: 1000))
        _ = try SchemaPattern("a{1000}b{0,1000}c{1000,}")
        let nested = try SchemaPattern(String(repeating: "(", count: 100) + "a" + String(repeating: ")", count: 100))
        #expect(nested.matches("a"))
    }

    @Test("matching takes linear time: patterns that make backtracking engines explode answer at once")
    func noCatastrophicBacktracking() throws {
        let text = String(repeating: "a", count: 20_000) + "!"
        for source in ["^(a+)+$", "^(a|a)*$", "^(a*)*b", "(a|aa)+c", "^(a?){40}a{40}$", #"^(\w+\s?)*$"#] {
            let pattern = try SchemaPattern(source)
            #expect(!pattern.matches(text), "\(source)")
            #expect(!pattern.matchesBySimulation(text), "\(source)")
        }
        #expect(try SchemaPattern("(x+x+)+y").matches(String(repeating: "x", count: 20_000) + "y"))
    }

    @Test("a DFA is built for ordinary patterns; \\b, or a subset construction past its limits, falls back to the NFA")
    func automaton() throws {
        #expect(try SchemaPattern("^[a-z]+(-[a-z0-9]+)*$").isDeterministic)
        #expect(try !SchemaPattern(#"\bword\b"#).isDeterministic)
        #expect(try !SchemaPattern(String(repeating: "x", count: 600)).isDeterministic, "a DFA of 601 states")
        // (a|b)*a(a|b){12}: the DFA must remember the last 13 letters, 2^13 states.
        let explosive = try SchemaPattern("(a|b)*a(a|b){12}$")
        #expect(!explosive.isDeterministic)
        #expect(explosive.matches("bbba" + String(repeating: "b", count: 12)))
        #expect(!explosive.matches("bbbb" + String(repeating: "b", count: 12)))
    }

    @Test("without a DFA, a check keeps to a budget of work per scalar and says when it ran out")
    func simulationBudget() throws {
        // Hundreds of threads alive at once: no DFA within its limits, and a long string costs
        // the simulation ~1000 steps per scalar.
        let wide = try SchemaPattern("[ab]{0,1000}c")
        #expect(!wide.isDeterministic)
        #expect(wide.check("abc") == true && wide.check("ab") == false)
        let long = String(repeating: "a", count: 10_000)
        #expect(wide.check(long) == nil, "past the budget: no verdict, rather than seconds of work")
        #expect(wide.matches(long) == false, "unbudgeted matching still answers")
        // Patterns without a DFA that keep few threads alive are checked in full.
        let literal = try SchemaPattern(String(repeating: "x", count: 600))
        #expect(!literal.isDeterministic)
        #expect(literal.check(String(repeating: "x", count: 5_000)) == true)
        #expect(try SchemaPattern(#"\bword\b"#).check(String(repeating: "a ", count: 5_000) + "word") == true)
        // A DFA answers whatever the length.
        #expect(try SchemaPattern("^[a-z]+$").check(String(repeating: "a", count: 100_000)) == true)
    }

    @Test("a pattern is equal to another with the same source, scalar by scalar")
    func equality() throws {
        #expect(try SchemaPattern("é") == SchemaPattern("é"))
        #expect(try SchemaPattern("é") != SchemaPattern("e\u{301}"))
        #expect(try SchemaPattern("^a").description == "^a")
    }

    // MARK: - Against a peer

    /// Random patterns of every supported construct, over a small alphabet so that they match
    /// sometimes.
    struct PatternGenerator {
        var random: SeededGenerator
        var literals = ["a", "b", "c", "-", " ", "1"]
        var classes = ["[ab]", "[^a]", "[a-c]", #"[\d-]"#, #"[^\w ]"#, "[b-c1]", "[ -a]"]

        mutating func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }

        mutating func pattern(depth: Int = 0) -> String {
            (0..<Int(random.next() % 4) + 1).map { _ in term(depth: depth) }.joined()
                + (depth < 2 && random.next() % 5 == 0 ? "|" + pattern(depth: depth + 1) : "")
        }

        mutating func term(depth: Int) -> String {
            switch random.next() % 12 {
            case 0: return pick(["^", "$", #"\b"#, #"\B"#])
            case 1: return atom(depth: depth)
            default: return atom(depth: depth) + quantifier()
            }
        }

        mutating func atom(depth: Int) -> String {
            switch random.next() % 10 {
            case 0, 1, 2: return pick(literals)
            case 3: return "."
            case 4: return pick([#"\d"#, #"\w"#, #"\s"#, #"\W"#, #"\D"#, #"\S"#, #"\x61"#, #"\u0062"#, #"\cJ"#])
            case 5: return pick(classes)
            case 6 where depth < 3: return "(" + pattern(depth: depth + 1) + ")"
            case 7 where depth < 3: return "(?:" + pattern(depth: depth + 1) + ")"
            default: return pick(["a", "b", "ab"])
            }
        }

        mutating func quantifier() -> String {
            let base = pick(["*", "+", "?", "{2}", "{0,2}", "{1,}", "{0}", "{1,3}"])
            return base + (random.next() % 4 == 0 ? "?" : "")
        }

        mutating func text() -> String {
            String((0..<Int(random.next() % 9)).map { _ in pick(Array("abc1 -_")) })
        }
    }

    /// Node.js, whose `RegExp` with the `u` flag is ECMA-262 itself; the comparison needs it
    /// and fails (does not skip) without it.
    static func node() throws -> String {
        for folder in ["/usr/bin", "/usr/local/bin"]
        where FileManager.default.isExecutableFile(atPath: "\(folder)/node") {
            return "\(folder)/node"
        }
        throw PeerMissing(
            description: "node is not installed: `make deploy-tools` installs it (apt-get install -y nodejs)")
    }

    struct PeerMissing: Error, CustomStringConvertible { var description: String }

    /// What `new RegExp(pattern, "u").test(text)` says for each pattern and its strings; nil
    /// for a pattern that node refuses.
    static func nodeVerdicts(_ cases: [(pattern: String, texts: [String])]) throws -> [[Bool]?] {
        let input: JSONValue = .array(
            cases.map { .object(["p": .string($0.pattern), "s": .array($0.texts.map(JSONValue.string))]) })
        let folder =
            NSTemporaryDirectory()
            + "schema-pattern-\(ProcessInfo.processInfo.processIdentifier)-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let inputPath = folder + "/cases.json"
        try Data(JSONWriter.write(input)).write(to: URL(fileURLWithPath: inputPath))
        let script = """
            const cases = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
            process.stdout.write(JSON.stringify(cases.map(c => {
                let r; try { r = new RegExp(c.p, "u"); } catch (e) { return null; }
                return c.s.map(t => r.test(t));
            })));
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try node())
        process.arguments = ["-e", script, inputPath]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let verdicts = try JSONReader.parse([UInt8](data))
        return (verdicts.arrayValue ?? []).map { row in
            row.arrayValue.map { $0.map { $0 == .bool(true) } }
        }
    }

    @Test("random patterns agree with ECMA-262 itself (node's RegExp, u flag) on random Unicode strings")
    func agreesWithNode() throws {
        var generator = PatternGenerator(random: SeededGenerator(state: 28))
        generator.literals += ["é", "😀", #"\n"#, #"\u2028"#, #"\uD83D\uDE00"#, #"\/"#, #"\."#]
        generator.classes += ["[é-😀]", #"[^\s]"#, #"[\u00A0\n]"#, "[^é]", #"[\-.]"#, "[^]", "[]"]
        let alphabet: [Character] = [
            "a", "b", "c", "1", " ", "-", "_", ".", "\n", "\r", "\u{2028}", "é", "e\u{301}", "😀", "\u{A0}", "\u{85}",
            "\u{FEFF}", "٣", ":", "@", "`", "{", "/",
        ]
        var cases: [(pattern: String, texts: [String])] = []
        for _ in 0..<3000 {
            let texts = (0..<12).map { _ in
                String((0..<Int(generator.random.next() % 9)).map { _ in generator.pick(alphabet) })
            }
            cases.append((generator.pattern(), texts))
        }
        let verdicts = try Self.nodeVerdicts(cases)
        try #require(verdicts.count == cases.count)
        for (c, expected) in zip(cases, verdicts) {
            guard let expected else {
                Issue.record("node refuses \(c.pattern), which SchemaPattern accepts")
                continue
            }
            let ours = try SchemaPattern(c.pattern)
            // V8 also tries \B between the two UTF-16 halves of an astral scalar (where it holds),
            // a position that ECMA-262's u mode and SchemaPattern do not have.
            let v8Quirk = c.pattern.contains(#"\B"#)
            for (text, verdict) in zip(c.texts, expected)
            where !(v8Quirk && text.unicodeScalars.contains { $0.value > 0xFFFF }) {
                #expect(ours.matches(text) == verdict, "\(c.pattern) on \(text.debugDescription): node says \(verdict)")
                #expect(ours.matchesBySimulation(text) == verdict, "\(c.pattern) (NFA) on \(text.debugDescription)")
            }
        }
    }

    @Test("the DFA and the NFA agree on random patterns and random Unicode strings")
    func automatonAgreesWithSimulation() throws {
        var generator = PatternGenerator(random: SeededGenerator(state: 6))
        generator.literals += ["é", "😀", #"\n"#, #"\u2028"#, #"\uD83D\uDE00"#]
        generator.classes += ["[é-😀]", #"[^\s]"#, #"[\u00A0\n]"#, "[^é]"]
        let alphabet: [Character] = ["a", "b", "1", " ", "\n", "\u{2028}", "é", "😀", "\u{A0}", "_", "-"]
        for _ in 0..<1000 {
            let source = generator.pattern()
            let ours = try SchemaPattern(source)
            for _ in 0..<10 {
                let text = String((0..<Int(generator.random.next() % 8)).map { _ in generator.pick(alphabet) })
                #expect(ours.matches(text) == ours.matchesBySimulation(text), "\(source) on \(text.debugDescription)")
            }
        }
    }
}
