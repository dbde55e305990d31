/// Reads the lines the hub writes to the results log without building a JSON tree: every start
/// reads the whole log back, and two thirds of that time went to the generic reader
/// (`bench/README.md` "Experiment results"). A line is a flat object of string and number
/// members (`ResultEvent.json`); anything this reader does not take on trust — an escape in a
/// string, a byte beyond ASCII, a nested value, `true`/`null`, a repeated member — makes it answer
/// nil, and the caller reads the line with `JSONReader` instead (which checks UTF-8 and escapes).
///
/// Invariant: for every line it accepts, the event equals the one `ResultEvent(json:saltOf:)`
/// makes of `JSONReader.parse(line)` (`ResultsTallyTests` checks it on generated lines).
struct ResultLineReader {
    /// The members a result line can have; the others are skipped.
    private enum Name: Int, CaseIterable {
        case ts, unit, event, goal, value, experiment, salt, variant, screen, version

        static let spelled: [[UInt8]] = allCases.map { Array("\($0)".utf8) }

        /// The name these bytes spell (nil: a member results do not read).
        init?(_ bytes: UnsafeRawBufferPointer) {
            guard let index = Self.spelled.firstIndex(where: { $0.elementsEqual(bytes) }) else { return nil }
            self.init(rawValue: index)
        }

        var index: Int { rawValue }
    }

    private enum Value {
        case string(String)
        case number(Double)
    }

    private let bytes: UnsafeRawBufferPointer
    private var at = 0
    private var values: [Value?] = Array(repeating: nil, count: Name.allCases.count)

    private init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    static func event(_ line: UnsafeRawBufferPointer, saltOf: (String) -> String) -> ResultEvent? {
        var reader = ResultLineReader(line)
        guard reader.readObject() else { return nil }
        return reader.event(saltOf: saltOf)
    }

    private func string(_ name: Name) -> String? {
        if case .string(let text)? = values[name.index] { return text }
        return nil
    }

    private func number(_ name: Name) -> Double? {
        if case .number(let number)? = values[name.index] { return number }
        return nil
    }

    /// As `JSONValue.intValue`.
    private func int(_ name: Name) -> Int? {
        guard let number = number(name), number.rounded() == number, abs(number) < 9.0e15 else { return nil }
        return Int(number)
    }

    /// As `ResultEvent(json:saltOf:)`, member by member.
    private func event(saltOf: (String) -> String) -> ResultEvent? {
        guard let at = int(.ts), let unit = string(.unit), let event = string(.event) else { return nil }
        if event == "track" {
            guard let goal = string(.goal), values[Name.value.index] == nil || number(.value) != nil else { return nil }
            return ResultEvent(.goal(event: goal, value: number(.value)), unit: unit, at: at)
        }
        guard let experiment = string(.experiment), let variant = string(.variant), let screen = string(.screen),
            let version = int(.version)
        else { return nil }
        let exposure = ResultEvent.Exposure(
            experiment: experiment, salt: string(.salt) ?? saltOf(experiment), variant: variant, screen: screen,
            version: version)
        switch event {
        case "served": return ResultEvent(.served(exposure), unit: unit, at: at)
        case "confirmed": return ResultEvent(.confirmed(exposure), unit: unit, at: at)
        default: return nil
        }
    }

    // MARK: - The flat object

    private mutating func readObject() -> Bool {
        guard take(UInt8(ascii: "{")) else { return false }
        if !take(UInt8(ascii: "}")) {
            repeat {
                skipSpace()
                guard let name = readName(), take(UInt8(ascii: ":")) else { return false }
                skipSpace()
                guard at < bytes.count else { return false }
                let value: Value
                if bytes[at] == UInt8(ascii: "\"") {
                    guard let text = readText() else { return false }
                    value = .string(text)
                } else {
                    guard let number = readNumber() else { return false }
                    value = .number(number)
                }
                if let known = Name(name) {
                    guard values[known.index] == nil else { return false }  // repeated: the generic reader decides
                    values[known.index] = value
                }
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")) else { return false }
        }
        skipSpace()
        return at == bytes.count
    }

    private mutating func skipSpace() {
        while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x09 || bytes[at] == 0x0D { at += 1 }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard at < bytes.count, bytes[at] == byte else { return false }
        at += 1
        return true
    }

    /// The bytes of a string at `at`; nil on an escape, a control byte or a byte beyond ASCII.
    private mutating func readName() -> UnsafeRawBufferPointer? {
        guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { return nil }
        at += 1
        let start = at
        while at < bytes.count, bytes[at] != UInt8(ascii: "\"") {
            guard bytes[at] != UInt8(ascii: "\\"), (0x20..<0x80).contains(bytes[at]) else { return nil }
            at += 1
        }
        guard at < bytes.count else { return nil }
        defer { at += 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<at])
    }

    /// A string at `at` (ASCII without escapes, which decodes as it is).
    private mutating func readText() -> String? {
        readName().map { String(decoding: $0, as: UTF8.self) }
    }

    /// A number in JSON's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func readNumber() -> Double? {
        let start = at
        func digits() -> Int {
            let from = at
            while at < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[at]) { at += 1 }
            return at - from
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "-") { at += 1 }
        let leading = at
        guard digits() > 0, bytes[leading] != UInt8(ascii: "0") || at == leading + 1 else { return nil }
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            at += 1
            guard digits() > 0 else { return nil }
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
            at += 1
            if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            guard digits() > 0 else { return nil }
        }
        let number = Double(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self))
        return number.flatMap { $0.isFinite ? $0 : nil }
    }
}
