/// A JSON Schema `pattern` (JSON Schema 2020-12 Validation §6.3.3): a regular expression in a
/// subset of ECMA-262's syntax, matched over Unicode scalars anywhere in a string — a search, as
/// JSON Schema says: `b` matches `"abc"`; anchor with `^…$` to match the whole string.
///
/// Supported: literal scalars; escapes `\d \D \w \W \s \S` (ECMA-262's ASCII `\d`/`\w`, its
/// Unicode `\s`), `\n \t \r \f \v \0`, `\xHH`, `\uXXXX` (a surrogate pair is one scalar),
/// `\cX`, any escaped ASCII punctuation; `.` (any scalar but a line terminator); classes
/// `[...]`/`[^...]` with ranges and those escapes (`\b` in a class is U+0008); `^` and `$` (the
/// string's start and end: there is no multiline flag); `\b` and `\B`; groups `( )` and `(?: )`;
/// `|`; quantifiers `* + ? {n} {n,} {n,m}` and their lazy forms (which match the same strings:
/// a pattern only answers whether it matches).
///
/// Refused when compiled, with a message naming the construct and its offset: backreferences,
/// lookahead and lookbehind, named groups, inline flags, Unicode property escapes, octal
/// escapes, `\u{…}`, lone surrogates, escapes ECMA-262 does not define (`\A`, `\Z`, `\e`, …), and
/// a `{`, `}` or `]` that is not escaped where it does not open or close anything — the spellings
/// that ECMA-262's Annex B, its `u` mode and other engines (Python's `re`) read differently.
///
/// Matching takes time linear in the string (no backtracking): the pattern compiles to a
/// Thompson NFA and, when the subset construction stays small and the pattern has no `\b`/`\B`,
/// to a DFA built once here; otherwise the NFA is simulated one set of states per scalar.
///
/// Invariants: `source` has at most `maxScalars` scalars; counted repetitions are at most
/// `maxRepetition`; the NFA has at most `maxInstructions` instructions; a value is immutable,
/// so one compiled pattern serves every loop.
public struct SchemaPattern: Sendable, Equatable, CustomStringConvertible {
    /// Why a pattern cannot be compiled: one sentence naming the construct, and where.
    public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Offset of the construct at fault, in Unicode scalars from the start of the pattern.
        public var offset: Int
        public var message: String
        public var description: String { message }
    }

    /// Longest pattern accepted, in Unicode scalars.
    public static let maxScalars = 1000
    /// Largest count in `{n}`, `{n,}` and `{n,m}`.
    public static let maxRepetition = 1000
    /// Largest NFA accepted: counted repetition copies its operand, so `(a{1000}){1000}` is
    /// short but would need a million states.
    public static let maxInstructions = 10_000
    /// Deepest nesting of groups (the parser recurses once per group).
    public static let maxGroupDepth = 100

    public let source: String
    let program: Program
    /// nil when the pattern uses `\b`/`\B`, or its DFA would exceed `Automaton`'s limits.
    let automaton: Automaton?

    /// Compiles `source`.
    /// - Throws: `SyntaxError` for what the subset does not hold, or for a pattern past a limit.
    public init(_ source: String) throws(SyntaxError) {
        let scalars = Array(source.unicodeScalars)
        guard scalars.count <= Self.maxScalars else {
            throw SyntaxError(
                offset: Self.maxScalars,
                message: "the pattern is \(scalars.count) characters long; at most \(Self.maxScalars) are accepted")
        }
        var parser = Parser(scalars: scalars)
        let tree = try parser.parsePattern()
        let size = tree.instructionCount
        guard size < Self.maxInstructions else {
            throw SyntaxError(
                offset: 0,
                message:
                    "the pattern needs more than \(Self.maxInstructions) states (counted repetitions copy what they repeat); use smaller counts"
            )
        }
        self.source = source
        self.program = Program(tree)
        self.automaton = Automaton(program)
    }

    /// Whether the pattern matches somewhere in `text` (JSON Schema's unanchored search).
    public func matches(_ text: String) -> Bool {
        if let automaton { return automaton.matches(text) }
        return program.matches(text, budget: .max) ?? false
    }

    /// The NFA simulation's work per scalar that `check` allows (on average over the string):
    /// the DFA does one step per scalar, and ordinary patterns without one (`\b`, long literals)
    /// keep a few threads alive; only patterns that keep hundreds alive at once pass it.
    public static let simulationStepsPerScalar = 64

    /// `matches`, within a budget of work: nil when the pattern has no DFA and simulating it on
    /// `text` would take more than `simulationStepsPerScalar` steps per scalar (`[ab]{0,1000}c` on
    /// a long string). Validation runs on the control plane's one thread, so what a publish costs
    /// there stays proportional to its size whatever the schema's patterns (the verdict is
    /// deterministic: the same string and pattern always give the same answer).
    public func check(_ text: String) -> Bool? {
        if let automaton { return automaton.matches(text) }
        return program.matches(text, budget: Self.simulationStepsPerScalar * (text.unicodeScalars.count + 16))
    }

    /// What `matches` answers, from the NFA simulation alone whether or not a DFA exists (slower):
    /// the unit tests and the fuzzer check that the two agree.
    public func matchesBySimulation(_ text: String) -> Bool { program.matches(text, budget: .max) ?? false }

    /// Whether matching runs the DFA (else the NFA simulation: `\b`/`\B`, or a DFA past its limits).
    public var isDeterministic: Bool { automaton != nil }

    public var description: String { source }

    public static func == (a: SchemaPattern, b: SchemaPattern) -> Bool { a.source.isScalarEqual(to: b.source) }
}

// MARK: - Sets of scalars

/// A set of Unicode scalar values as sorted ranges.
///
/// Invariant: `ranges` are sorted, disjoint and not adjacent (so equal sets have equal ranges),
/// and lie within 0...0x10FFFF.
struct ScalarSet: Sendable, Equatable {
    private(set) var ranges: [ClosedRange<UInt32>]

    init(_ ranges: [ClosedRange<UInt32>]) {
        var merged: [ClosedRange<UInt32>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound &+ 1 {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        self.ranges = merged
    }

    init(scalar: UInt32) { ranges = [scalar...scalar] }

    static let all = ScalarSet([0...0x10FFFF])
    static let digit = ScalarSet([0x30...0x39])
    static let word = ScalarSet([0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A])
    /// ECMA-262's WhiteSpace and LineTerminator (§12.2, §12.3): what `\s` matches.
    static let space = ScalarSet([
        0x09...0x0D, 0x20...0x20, 0xA0...0xA0, 0x1680...0x1680, 0x2000...0x200A, 0x2028...0x2029,
        0x202F...0x202F, 0x205F...0x205F, 0x3000...0x3000, 0xFEFF...0xFEFF,
    ])
    /// What `.` does not match (ECMA-262 §12.3).
    static let lineTerminators = ScalarSet([0x0A...0x0A, 0x0D...0x0D, 0x2028...0x2029])

    var inverted: ScalarSet {
        var gaps: [ClosedRange<UInt32>] = []
        var next: UInt32 = 0
        for range in ranges {
            if range.lowerBound > next { gaps.append(next...(range.lowerBound - 1)) }
            next = range.upperBound + 1
        }
        if next <= 0x10FFFF { gaps.append(next...0x10FFFF) }
        return ScalarSet(gaps)
    }

    func union(_ other: ScalarSet) -> ScalarSet { ScalarSet(ranges + other.ranges) }

    func contains(_ scalar: UInt32) -> Bool {
        var low = 0
        var high = ranges.count
        while low < high {
            let mid = (low + high) / 2
            if ranges[mid].upperBound < scalar {
                low = mid + 1
            } else if ranges[mid].lowerBound > scalar {
                high = mid
            } else {
                return true
            }
        }
        return false
    }
}

extension SchemaPattern {
    /// Zero-width tests of the position between two scalars.
    enum Assertion: Sendable, Equatable {
        case start, end, wordBoundary, notWordBoundary
    }

    /// A parsed pattern.
    indirect enum Node: Sendable, Equatable {
        case empty
        case set(ScalarSet)
        case concatenation([Node])
        case alternation([Node])
        /// `max` nil: unbounded.
        case repetition(Node, min: Int, max: Int?)
        case assertion(Assertion)

        /// Instructions `Program` emits for this node, saturating rather than overflowing.
        var instructionCount: Int {
            let cap = SchemaPattern.maxInstructions
            switch self {
            case .empty: return 0
            case .set, .assertion: return 1
            case .concatenation(let nodes): return min(cap, nodes.reduce(0) { min(cap, $0 + $1.instructionCount) })
            case .alternation(let nodes):
                return min(cap, nodes.reduce(2 * (nodes.count - 1)) { min(cap, $0 + $1.instructionCount) })
            case .repetition(let node, let low, let high):
                let one = node.instructionCount
                let required = min(cap, low * one)
                let optional = high.map { min(cap, ($0 - low) * (one + 1)) } ?? (one + 2)
                return min(cap, required + optional)
            }
        }
    }
}

// MARK: - Parsing

extension SchemaPattern {
    /// Recursive descent over ECMA-262's Pattern grammar (§22.2.1), restricted to the subset.
    struct Parser {
        let scalars: [Unicode.Scalar]
        var position = 0
        var depth = 0

        init(scalars: [Unicode.Scalar]) { self.scalars = scalars }

        var peek: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

        func peek(_ offset: Int) -> Unicode.Scalar? {
            position + offset < scalars.count ? scalars[position + offset] : nil
        }

        func error(_ message: String, at offset: Int) -> SyntaxError {
            SyntaxError(offset: offset, message: "\(message) (at offset \(offset))")
        }

        mutating func parsePattern() throws(SyntaxError) -> Node {
            let node = try parseDisjunction()
            if position < scalars.count {
                // Only a `)` stops a disjunction early.
                throw error("unmatched ): write \\) for a literal parenthesis", at: position)
            }
            return node
        }

        mutating func parseDisjunction() throws(SyntaxError) -> Node {
            var alternatives = [try parseAlternative()]
            while peek == "|" {
                position += 1
                alternatives.append(try parseAlternative())
            }
            return alternatives.count == 1 ? alternatives[0] : .alternation(alternatives)
        }

        mutating func parseAlternative() throws(SyntaxError) -> Node {
            var terms: [Node] = []
            while let scalar = peek, scalar != "|", scalar != ")" {
                terms.append(try parseTerm())
            }
            switch terms.count {
            case 0: return .empty
            case 1: return terms[0]
            default: return .concatenation(terms)
            }
        }

        mutating func parseTerm() throws(SyntaxError) -> Node {
            let start = position
            let atom: Node
            var isAssertion = false
            switch scalars[position] {
            case "^":
                position += 1
                atom = .assertion(.start)
                isAssertion = true
            case "$":
                position += 1
                atom = .assertion(.end)
                isAssertion = true
            case "\\":
                atom = try parseAtomEscape()
                if case .assertion = atom { isAssertion = true }
            case "(":
                atom = try parseGroup()
            case "[":
                atom = .set(try parseClass())
            case ".":
                position += 1
                atom = .set(ScalarSet.lineTerminators.inverted)
            case "*", "+", "?":
                throw error(
                    "nothing to repeat before \(scalars[position]): write \\\(scalars[position]) for the character",
                    at: start)
            case "{":
                if quantifierBraces() != nil {
                    throw error("nothing to repeat before {: write \\{ for the character", at: start)
                }
                throw error("a { that does not start {n}, {n,} or {n,m} must be escaped as \\{", at: start)
            case "}":
                throw error("a lone } must be escaped as \\}", at: start)
            case "]":
                throw error("a lone ] must be escaped as \\]", at: start)
            default:
                atom = .set(ScalarSet(scalar: scalars[position].value))
                position += 1
            }
            guard let (low, high) = try parseQuantifier() else { return atom }
            if isAssertion {
                throw error("an assertion (^, $, \\b, \\B) cannot be repeated", at: start)
            }
            if let next = peek, "*+?{".unicodeScalars.contains(next), next != "{" || quantifierBraces() != nil {
                throw error("nothing to repeat before \(next): a quantifier cannot follow another", at: position)
            }
            return .repetition(atom, min: low, max: high)
        }

        /// A quantifier at `position` (and its lazy `?`), or nil when none follows the atom.
        mutating func parseQuantifier() throws(SyntaxError) -> (Int, Int?)? {
            let start = position
            let bounds: (Int, Int?)
            switch peek {
            case "*":
                position += 1
                bounds = (0, nil)
            case "+":
                position += 1
                bounds = (1, nil)
            case "?":
                position += 1
                bounds = (0, 1)
            case "{":
                guard let braces = quantifierBraces() else {
                    throw error("a { that does not start {n}, {n,} or {n,m} must be escaped as \\{", at: start)
                }
                position = braces.end
                for count in [braces.low, braces.high].compactMap({ $0 }) where count > SchemaPattern.maxRepetition {
                    throw error(
                        "the count \(count) is above the \(SchemaPattern.maxRepetition) a repetition may have",
                        at: start)
                }
                if let high = braces.high, high < braces.low {
                    throw error("{\(braces.low),\(high)}: the counts are out of order", at: start)
                }
                bounds = (braces.low, braces.high)
            default:
                return nil
            }
            if peek == "?" { position += 1 }  // lazy: the same strings match
            return bounds
        }

        /// Reads `{n}`, `{n,}` or `{n,m}` at `position` without consuming it. Counts saturate
        /// above `maxRepetition` (reported by the caller) instead of overflowing.
        func quantifierBraces() -> (low: Int, high: Int?, end: Int)? {
            var index = position + 1
            func number() -> Int? {
                var value: Int?
                while index < scalars.count, let digit = scalars[index].asciiDigit {
                    value = min((value ?? 0) * 10 + digit, SchemaPattern.maxRepetition + 1)
                    index += 1
                }
                return value
            }
            guard let low = number() else { return nil }
            var high: Int? = low
            if index < scalars.count, scalars[index] == "," {
                index += 1
                high = number()
            }
            guard index < scalars.count, scalars[index] == "}" else { return nil }
            return (low, high, index + 1)
        }

        mutating func parseGroup() throws(SyntaxError) -> Node {
            let start = position
            position += 1
            if peek == "?" {
                switch (peek(1), peek(2)) {
                case (":", _):
                    position += 2
                case ("=", _), ("!", _):
                    throw error("lookahead (?\(peek(1)!) is not supported", at: start)
                case ("<", "="), ("<", "!"):
                    throw error("lookbehind (?<\(peek(2)!) is not supported", at: start)
                case ("<", _), ("P", _):
                    throw error("named groups (?<name>…) are not supported: use ( ) or (?: )", at: start)
                default:
                    throw error(
                        "(? starts only (?: here: inline flags and other group kinds are not supported", at: start)
                }
            }
            depth += 1
            guard depth <= SchemaPattern.maxGroupDepth else {
                throw error("groups nest more than \(SchemaPattern.maxGroupDepth) deep", at: start)
            }
            let inner = try parseDisjunction()
            depth -= 1
            guard peek == ")" else { throw error("the ( here has no matching )", at: start) }
            position += 1
            return inner
        }

        /// What an escape stands for.
        enum Escape {
            case scalar(UInt32)
            case set(ScalarSet)
            case assertion(Assertion)
        }

        mutating func parseAtomEscape() throws(SyntaxError) -> Node {
            switch try parseEscape(inClass: false) {
            case .scalar(let value): return .set(ScalarSet(scalar: value))
            case .set(let set): return .set(set)
            case .assertion(let assertion): return .assertion(assertion)
            }
        }

        /// The escape at `position` (a backslash), outside or inside a class.
        mutating func parseEscape(inClass: Bool) throws(SyntaxError) -> Escape {
            let start = position
            position += 1
            guard let letter = peek else { throw error("the pattern ends with a lone \\", at: start) }
            position += 1
            switch letter {
            case "d": return .set(.digit)
            case "D": return .set(ScalarSet.digit.inverted)
            case "w": return .set(.word)
            case "W": return .set(ScalarSet.word.inverted)
            case "s": return .set(.space)
            case "S": return .set(ScalarSet.space.inverted)
            case "n": return .scalar(0x0A)
            case "t": return .scalar(0x09)
            case "r": return .scalar(0x0D)
            case "f": return .scalar(0x0C)
            case "v": return .scalar(0x0B)
            case "b": return inClass ? .scalar(0x08) : .assertion(.wordBoundary)
            case "B":
                if inClass { throw error("\\B (not a word boundary) cannot be in a class", at: start) }
                return .assertion(.notWordBoundary)
            case "-" where inClass: return .scalar(0x2D)
            case "0":
                if peek?.asciiDigit != nil {
                    throw error("octal escapes (\\0 and digits) are not supported", at: start)
                }
                return .scalar(0)
            case "1"..."9":
                throw error("backreferences (\\\(letter)) are not supported", at: start)
            case "k":
                throw error("named backreferences (\\k<name>) are not supported", at: start)
            case "p", "P":
                throw error("Unicode property escapes (\\\(letter){…}) are not supported", at: start)
            case "c":
                guard let control = peek, control.isASCIILetter else {
                    throw error("\\c must be followed by a letter A-Z or a-z", at: start)
                }
                position += 1
                return .scalar(control.value % 32)
            case "x":
                guard let value = hexDigits(2) else { throw error("\\x must be followed by two hex digits", at: start) }
                return .scalar(value)
            case "u":
                return .scalar(try parseUnicodeEscape(start: start))
            default:
                if letter.value < 0x80 && !letter.isASCIILetter && letter.asciiDigit == nil && letter.value >= 0x20
                    && letter.value != 0x7F
                {
                    return .scalar(letter.value)  // escaped punctuation stands for itself
                }
                throw error("\\\(letter) is not a supported escape", at: start)
            }
        }

        /// After `\u`: four hex digits, a surrogate pair written as two escapes being one scalar.
        mutating func parseUnicodeEscape(start: Int) throws(SyntaxError) -> UInt32 {
            if peek == "{" {
                throw error("\\u{…} is not supported: write \\uXXXX (a surrogate pair above U+FFFF)", at: start)
            }
            guard let unit = hexDigits(4) else { throw error("\\u must be followed by four hex digits", at: start) }
            switch unit {
            case 0xD800...0xDBFF:
                let mark = position
                if peek == "\\", peek(1) == "u" {
                    position += 2
                    if let low = hexDigits(4), (0xDC00...0xDFFF).contains(low) {
                        return 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    }
                }
                position = mark
                throw error(
                    "\\u\(hex(unit)) is a lone surrogate, which no string holds; write the pair or the character",
                    at: start)
            case 0xDC00...0xDFFF:
                throw error(
                    "\\u\(hex(unit)) is a lone surrogate, which no string holds; write the pair or the character",
                    at: start)
            default:
                return unit
            }
        }

        private func hex(_ unit: UInt32) -> String {
            let digits = String(unit, radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }

        /// `count` hex digits at `position`, consumed; nil (nothing consumed) when there are fewer.
        mutating func hexDigits(_ count: Int) -> UInt32? {
            var value: UInt32 = 0
            for offset in 0..<count {
                guard let digit = peek(offset)?.hexDigitValue else { return nil }
                value = value * 16 + digit
            }
            position += count
            return value
        }

        /// `[...]` or `[^...]` at `position`.
        mutating func parseClass() throws(SyntaxError) -> ScalarSet {
            let start = position
            position += 1
            var negated = false
            if peek == "^" {
                negated = true
                position += 1
            }
            var ranges: [ClosedRange<UInt32>] = []
            while true {
                guard let scalar = peek else { throw error("the [ here has no matching ]", at: start) }
                if scalar == "]" {
                    position += 1
                    break
                }
                let atomStart = position
                let first = try parseClassAtom()
                // A `-` between two atoms is a range; first or last in the class, a hyphen.
                if peek == "-", let after = peek(1), after != "]" {
                    position += 1
                    let second = try parseClassAtom()
                    guard case .scalar(let low) = first, case .scalar(let high) = second else {
                        throw error(
                            "a range cannot start or end with a class escape (\\d, \\w, \\s…); write \\- for a hyphen",
                            at: atomStart)
                    }
                    guard low <= high else {
                        throw error("the range \(describe(low))-\(describe(high)) is out of order", at: atomStart)
                    }
                    ranges.append(low...high)
                    continue
                }
                switch first {
                case .scalar(let value): ranges.append(value...value)
                case .set(let set): ranges += set.ranges
                case .assertion: preconditionFailure("parseEscape(inClass: true) returns no assertion")
                }
            }
            let set = ScalarSet(ranges)
            return negated ? set.inverted : set
        }

        mutating func parseClassAtom() throws(SyntaxError) -> Escape {
            let scalar = scalars[position]
            if scalar == "\\" { return try parseEscape(inClass: true) }
            position += 1
            return .scalar(scalar.value)
        }

        private func describe(_ value: UInt32) -> String {
            Unicode.Scalar(value).map { String(Character($0)) } ?? "U+\(hex(value))"
        }
    }
}

extension Unicode.Scalar {
    fileprivate var asciiDigit: Int? { ("0"..."9").contains(self) ? Int(value - 0x30) : nil }

    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }

    fileprivate var hexDigitValue: UInt32? {
        switch self {
        case "0"..."9": value - 0x30
        case "a"..."f": value - 0x61 + 10
        case "A"..."F": value - 0x41 + 10
        default: nil
        }
    }
}

// MARK: - The NFA

extension SchemaPattern {
    /// A Thompson NFA as a program (Cox, "Regular Expression Matching: the Virtual Machine
    /// Approach"): consuming instructions go on to the next one, the others are ε-moves.
    ///
    /// Invariant: every jump target is within `instructions`, whose last element is `.match`.
    struct Program: Sendable {
        enum Instruction: Sendable {
            case scalar(UInt32)
            /// Index into `sets`.
            case set(Int)
            /// Both ways (no priorities: a match is only yes or no).
            case split(Int, Int)
            case jump(Int)
            case assertion(Assertion)
            case match
        }

        private(set) var instructions: [Instruction] = []
        private(set) var sets: [ScalarSet] = []

        init(_ node: Node) {
            emit(node)
            instructions.append(.match)
        }

        private mutating func emit(_ node: Node) {
            switch node {
            case .empty:
                break
            case .set(let set):
                if set.ranges.count == 1, set.ranges[0].lowerBound == set.ranges[0].upperBound {
                    instructions.append(.scalar(set.ranges[0].lowerBound))
                } else {
                    instructions.append(.set(sets.count))
                    sets.append(set)
                }
            case .assertion(let assertion):
                instructions.append(.assertion(assertion))
            case .concatenation(let nodes):
                for node in nodes { emit(node) }
            case .alternation(let nodes):
                // split L1, next; L1: a; jump end; next: split L2, … ; last alternative; end:
                var jumps: [Int] = []
                for (i, alternative) in nodes.enumerated() {
                    if i < nodes.count - 1 {
                        let split = instructions.count
                        instructions.append(.split(0, 0))
                        emit(alternative)
                        jumps.append(instructions.count)
                        instructions.append(.jump(0))
                        instructions[split] = .split(split + 1, instructions.count)
                    } else {
                        emit(alternative)
                    }
                }
                for jump in jumps { instructions[jump] = .jump(instructions.count) }
            case .repetition(let node, let low, let high):
                for _ in 0..<low { emit(node) }
                if let high {
                    // Each optional copy may be skipped to the end.
                    var splits: [Int] = []
                    for _ in low..<high {
                        splits.append(instructions.count)
                        instructions.append(.split(0, 0))
                        emit(node)
                    }
                    for split in splits { instructions[split] = .split(split + 1, instructions.count) }
                } else {
                    // loop: split body, end; body; jump loop; end:
                    let loop = instructions.count
                    instructions.append(.split(0, 0))
                    emit(node)
                    instructions.append(.jump(loop))
                    instructions[loop] = .split(loop + 1, instructions.count)
                }
            }
        }

        var usesWordBoundaries: Bool {
            instructions.contains {
                if case .assertion(let kind) = $0 { return kind == .wordBoundary || kind == .notWordBoundary }
                return false
            }
        }

        func accepts(_ pc: Int, _ scalar: UInt32) -> Bool {
            switch instructions[pc] {
            case .scalar(let value): value == scalar
            case .set(let index): sets[index].contains(scalar)
            case .split, .jump, .assertion, .match: false
            }
        }

        /// The position between two scalars, as assertions see it.
        struct Position {
            var isStart: Bool
            var isEnd: Bool
            var previous: UInt32?
            var next: UInt32?

            func satisfies(_ assertion: Assertion) -> Bool {
                switch assertion {
                case .start: return isStart
                case .end: return isEnd
                case .wordBoundary, .notWordBoundary:
                    let before = previous.map(ScalarSet.word.contains) ?? false
                    let after = next.map(ScalarSet.word.contains) ?? false
                    return (before != after) == (assertion == .wordBoundary)
                }
            }
        }

        /// A set of instructions, each listed once per generation (Briggs–Torczon style marks).
        struct ThreadList {
            var pcs: [Int] = []
            var marks: [Int]
            var generation = 1

            init(count: Int) { marks = Array(repeating: 0, count: count) }

            mutating func clear() {
                pcs.removeAll(keepingCapacity: true)
                generation += 1
            }

            /// Marks `pc`; false when it was marked already in this generation.
            mutating func mark(_ pc: Int) -> Bool {
                guard marks[pc] != generation else { return false }
                marks[pc] = generation
                return true
            }
        }

        /// Follows ε-moves from `pcs`, listing in `list` the consuming instructions reached (each
        /// once per generation of `list`); `passes` says whether the walk goes on past an
        /// assertion. `stack` is scratch space; `steps` counts the instructions visited (popped).
        /// The one ε-walk of both the simulation and the DFA's construction.
        /// - Returns: whether `.match` was reached (with `stopAtMatch`, the walk ends there).
        func followEpsilons(
            from pcs: some BidirectionalCollection<Int>, into list: inout ThreadList, stack: inout [Int],
            steps: inout Int, stopAtMatch: Bool,
            passes: (Assertion, _ pc: Int) -> Bool
        ) -> Bool {
            var reachesMatch = false
            stack.append(contentsOf: pcs.reversed())
            while let pc = stack.popLast() {
                steps &+= 1
                guard list.mark(pc) else { continue }
                switch instructions[pc] {
                case .scalar, .set:
                    list.pcs.append(pc)
                case .split(let a, let b):
                    stack.append(b)
                    stack.append(a)
                case .jump(let target):
                    stack.append(target)
                case .assertion(let assertion):
                    if passes(assertion, pc) { stack.append(pc + 1) }
                case .match:
                    reachesMatch = true
                    if stopAtMatch {
                        stack.removeAll(keepingCapacity: true)
                        return true
                    }
                }
            }
            return reachesMatch
        }

        /// The simulation's step: ε-moves from `pc` at `position`; true as soon as `.match` is reached.
        func addThread(
            _ pc: Int, at position: Position, to list: inout ThreadList, stack: inout [Int], steps: inout Int
        ) -> Bool {
            followEpsilons(from: CollectionOfOne(pc), into: &list, stack: &stack, steps: &steps, stopAtMatch: true) { assertion, _ in
                position.satisfies(assertion)
            }
        }

        /// Pike's simulation without captures: one set of states per position, each scalar
        /// read once, so time is O(scalars × instructions). nil once more than `budget`
        /// instructions were visited.
        func matches(_ text: String, budget: Int) -> Bool? {
            var current = ThreadList(count: instructions.count)
            var next = ThreadList(count: instructions.count)
            var stack: [Int] = []
            var steps = 0
            var iterator = text.unicodeScalars.makeIterator()
            var previous: UInt32?
            var scalar = iterator.next()?.value
            while true {
                let position = Position(
                    isStart: previous == nil, isEnd: scalar == nil, previous: previous, next: scalar)
                // A match may start here (the search is unanchored).
                if addThread(0, at: position, to: &current, stack: &stack, steps: &steps) { return true }
                guard let consumed = scalar else { return false }
                guard steps <= budget else { return nil }
                let following = iterator.next()?.value
                let after = Position(isStart: false, isEnd: following == nil, previous: consumed, next: following)
                next.clear()
                for pc in current.pcs where accepts(pc, consumed) {
                    if addThread(pc + 1, at: after, to: &next, stack: &stack, steps: &steps) { return true }
                }
                swap(&current, &next)
                previous = consumed
                scalar = following
            }
        }
    }
}

// MARK: - The DFA

extension SchemaPattern {
    /// The NFA's subset construction, built once when it stays within `maxStates` states,
    /// `maxTransitions` table entries and `maxClosureSteps` steps of work. Scalars are read
    /// through equivalence classes: ranges of scalars that every set of the program either
    /// wholly holds or wholly lacks; ASCII scalars also through `asciiTransitions`, directly.
    ///
    /// Invariants: a transition to an accepting set is `matched` (the search is over once a
    /// match is found anywhere), to the empty set `dead`; state 0 is the start of the string
    /// (where `^` holds), never shared with a state reached later.
    struct Automaton: Sendable {
        static let maxStates = 500
        /// 256 KiB of table per pattern at most (and as much again for `asciiTransitions`).
        static let maxTransitions = 65_536
        static let maxClosureSteps = 4_000_000
        static let matched: Int32 = -1
        static let dead: Int32 = -2

        /// Class `i` is the scalars from `boundaries[i]` up to the next boundary.
        let boundaries: [UInt32]
        let asciiClasses: [Int32]
        let classCount: Int
        /// `transitions[state * classCount + class]`.
        let transitions: [Int32]
        /// `transitions` for ASCII scalars, without the class lookup: `[state * 128 + scalar]`.
        let asciiTransitions: [Int32]
        /// Whether the string ending in that state is a match (`$` reached).
        let acceptsAtEnd: [Bool]
        /// `matched` or `dead` when the empty prefix decides already, else 0.
        let start: Int32

        init?(_ program: Program) {
            guard !program.usesWordBoundaries else { return nil }
            // Every range edge of every consuming instruction cuts the scalars into classes.
            var cuts: Set<UInt32> = [0, 0x80]
            for instruction in program.instructions {
                switch instruction {
                case .scalar(let value):
                    cuts.insert(value)
                    cuts.insert(value + 1)
                case .set(let index):
                    for range in program.sets[index].ranges {
                        cuts.insert(range.lowerBound)
                        cuts.insert(range.upperBound + 1)
                    }
                case .split, .jump, .assertion, .match:
                    break
                }
            }
            let boundaries = cuts.filter { $0 <= 0x10FFFF }.sorted()
            let classCount = boundaries.count
            self.boundaries = boundaries
            self.classCount = classCount
            var asciiClasses: [Int32] = []
            var classIndex = 0
            for scalar in UInt32(0)..<0x80 {
                while classIndex + 1 < classCount && boundaries[classIndex + 1] <= scalar { classIndex += 1 }
                asciiClasses.append(Int32(classIndex))
            }
            self.asciiClasses = asciiClasses

            var builder = Builder(program: program)
            let first = builder.closure(from: [0], isStart: true)
            guard !first.reachesMatch else {
                transitions = []
                asciiTransitions = []
                acceptsAtEnd = []
                start = Self.matched
                return
            }
            var states = [first]
            var index: [Builder.Closure: Int32] = [:]
            var table: [Int32] = []
            var next = 0
            while next < states.count {
                let state = states[next]
                next += 1
                for classIndex in 0..<classCount {
                    let representative = boundaries[classIndex]
                    let kernel = state.consuming.filter { program.accepts($0, representative) }.map { $0 + 1 } + [0]
                    let target = builder.closure(from: kernel, isStart: false)
                    if target.reachesMatch {
                        table.append(Self.matched)
                    } else if target.consuming.isEmpty && target.blockedAtEnd.isEmpty {
                        table.append(Self.dead)
                    } else if let known = index[target] {
                        table.append(known)
                    } else {
                        index[target] = Int32(states.count)
                        table.append(Int32(states.count))
                        states.append(target)
                    }
                }
                guard states.count <= Self.maxStates, table.count <= Self.maxTransitions, builder.budget > 0 else {
                    return nil
                }
            }
            guard states.count * 128 <= Self.maxTransitions else { return nil }
            transitions = table
            asciiTransitions = states.indices.flatMap { state in
                asciiClasses.map { table[state * classCount + Int($0)] }
            }
            acceptsAtEnd = states.enumerated().map { i, state in
                builder.closure(from: state.blockedAtEnd.map { $0 + 1 }, isStart: i == 0, isEnd: true).reachesMatch
            }
            start = 0
        }

        /// The NFA states an ε-closure reaches, as the subset construction names them.
        struct Builder {
            struct Closure: Hashable {
                /// Consuming instructions reached, sorted.
                var consuming: [Int]
                /// `$` assertions reached (they hold only at the end), sorted.
                var blockedAtEnd: [Int]
                var reachesMatch: Bool
            }

            let program: Program
            var list: Program.ThreadList
            var stack: [Int] = []
            /// Instructions the closures may still visit: the construction gives up (and the
            /// pattern is simulated instead) rather than stall a registration.
            var budget = Automaton.maxClosureSteps

            init(program: Program) {
                self.program = program
                list = Program.ThreadList(count: program.instructions.count)
            }

            mutating func closure(from pcs: [Int], isStart: Bool, isEnd: Bool = false) -> Closure {
                list.clear()
                var blocked: [Int] = []
                var steps = 0
                let reachesMatch = program.followEpsilons(
                    from: pcs, into: &list, stack: &stack, steps: &steps, stopAtMatch: false
                ) { assertion, pc in
                    switch assertion {
                    case .start: return isStart
                    case .end:
                        if !isEnd { blocked.append(pc) }
                        return isEnd
                    case .wordBoundary, .notWordBoundary:
                        preconditionFailure("no DFA is built for a pattern with \\b or \\B")
                    }
                }
                budget -= steps
                return Closure(consuming: list.pcs.sorted(), blockedAtEnd: blocked.sorted(), reachesMatch: reachesMatch)
            }
        }

        @inline(__always) func classOf(_ scalar: UInt32) -> Int {
            if scalar < 0x80 { return Int(asciiClasses[Int(scalar)]) }
            var low = 0
            var high = boundaries.count
            // The last boundary at or below `scalar` (boundaries[0] == 0).
            while high - low > 1 {
                let mid = (low + high) / 2
                if boundaries[mid] <= scalar { low = mid } else { high = mid }
            }
            return low
        }

        func matches(_ text: String) -> Bool {
            var state = start
            guard state >= 0 else { return state == Self.matched }
            // Native strings are contiguous, valid UTF-8: decode it in place, ASCII in one step.
            let ended: Int32? = text.utf8.withContiguousStorageIfAvailable { bytes in
                asciiTransitions.withUnsafeBufferPointer { ascii in
                    run(from: state, over: bytes, ascii: ascii)
                }
            }
            if let ended {
                state = ended
            } else {
                for scalar in text.unicodeScalars {
                    state = transitions[Int(state) * classCount + classOf(scalar.value)]
                    if state < 0 { break }
                }
            }
            return state < 0 ? state == Self.matched : acceptsAtEnd[Int(state)]
        }

        /// Runs the DFA over valid UTF-8 from `state`: where it ends, or `matched`/`dead` as soon as
        /// it is decided. An ASCII byte takes one lookup in `ascii` (`asciiTransitions`).
        private func run(
            from start: Int32, over bytes: UnsafeBufferPointer<UInt8>, ascii: UnsafeBufferPointer<Int32>
        ) -> Int32 {
            var state = start
            var i = 0
            while i < bytes.count {
                let lead = UInt32(bytes[i])
                if lead < 0x80 {
                    state = ascii[Int(state) &<< 7 | Int(lead)]
                    i += 1
                } else {
                    let scalar: UInt32
                    switch lead {
                    case ..<0xE0:
                        scalar = (lead & 0x1F) << 6 | UInt32(bytes[i + 1] & 0x3F)
                        i += 2
                    case ..<0xF0:
                        scalar = (lead & 0x0F) << 12 | UInt32(bytes[i + 1] & 0x3F) << 6 | UInt32(bytes[i + 2] & 0x3F)
                        i += 3
                    default:
                        scalar =
                            (lead & 0x07) << 18 | UInt32(bytes[i + 1] & 0x3F) << 12 | UInt32(bytes[i + 2] & 0x3F) << 6
                            | UInt32(bytes[i + 3] & 0x3F)
                        i += 4
                    }
                    state = transitions[Int(state) * classCount + classOf(scalar)]
                }
                if state < 0 { return state }
            }
            return state
        }
    }
}
