/// Writes JSON in the RFC 8785 (JCS) canonical form: no whitespace, object members sorted by
/// the UTF-16 code units of their names, ECMAScript number formatting, minimal string escapes.
/// Every JSON the hub writes is canonical, so the bytes of a tree are its hash input.
///
/// Invariant: `JSONReader.parse(write(v)) == v` for every `v`.
public enum JSONWriter {
    public static func write(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        write(value, to: &out)
        return out
    }

    public static func string(_ value: JSONValue) -> String { String(decoding: write(value), as: UTF8.self) }

    public static func write(_ value: JSONValue, to out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): out.append(contentsOf: formatNumber(number).utf8)
        case .string(let text): writeString(text, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(element, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, key) in sortedKeys(members).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                write(members[key]!, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Member names in RFC 8785 §3.2.3 order: by UTF-16 code units.
    public static func sortedKeys(_ members: [String: JSONValue]) -> [String] {
        members.keys.sorted { a, b in a.utf16.lexicographicallyPrecedes(b.utf16) }
    }

    /// RFC 8785 §3.2.2.2: `"` and `\` escaped, control characters as \b \t \n \f \r or \u00xx.
    public static func writeString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x08: out.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0C: out.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// ECMAScript's Number::toString (ECMA-262 §6.1.6.1.20) from the shortest round-trip digits.
    public static func formatNumber(_ value: Double) -> String {
        precondition(value.isFinite, "JSON numbers are finite")
        if value == 0 { return "0" }
        if value < 0 { return "-" + formatNumber(-value) }
        // Swift's description gives the shortest digits that round-trip, e.g. "1.5e-07", "123.0".
        var text = Substring(value.description)
        var exponent = 0
        if let e = text.firstIndex(of: "e") {
            exponent = Int(text[text.index(after: e)...])!
            text = text[..<e]
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        var digits = Array(parts[0].utf8) + (parts.count > 1 ? Array(parts[1].utf8) : [])
        var point = parts[0].utf8.count + exponent  // value = 0.digits × 10^point
        while digits.first == UInt8(ascii: "0") {
            digits.removeFirst()
            point -= 1
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        let k = digits.count, n = point
        let d = String(decoding: digits, as: UTF8.self)
        if k <= n && n <= 21 { return d + String(repeating: "0", count: n - k) }
        if 0 < n && n <= 21 { return String(d.prefix(n)) + "." + String(d.dropFirst(n)) }
        if -6 < n && n <= 0 { return "0." + String(repeating: "0", count: -n) + d }
        let e = n - 1
        let exponentText = (e < 0 ? "-" : "+") + String(abs(e))
        if k == 1 { return d + "e" + exponentText }
        return String(d.prefix(1)) + "." + String(d.dropFirst()) + "e" + exponentText
    }
}
