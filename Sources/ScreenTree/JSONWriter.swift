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
        case .number(let number):
            if isSafeInteger(number) {
                appendInteger(Int64(number), to: &out)
            } else {
                out.append(contentsOf: formatNumber(number).utf8)
            }
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
            for (i, member) in members.members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                write(member.value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Member names in RFC 8785 §3.2.3 order: UTF-16 code unit order. UTF-8 byte order agrees with it unless both strings have a
    /// non-ASCII character at their first difference, so compare bytes and fall back only then.
    public static func precedes(_ a: String, _ b: String) -> Bool {
        // 0: a first, 1: b first or equal, 2: undecided (both non-ASCII at the first difference).
        let fast: Int?? = a.utf8.withContiguousStorageIfAvailable { x -> Int? in
            b.utf8.withContiguousStorageIfAvailable { y -> Int in
                let count = min(x.count, y.count)
                var i = 0
                while i < count && x[i] == y[i] { i += 1 }
                if i == count { return x.count < y.count ? 0 : 1 }
                if x[i] < 0x80 || y[i] < 0x80 { return x[i] < y[i] ? 0 : 1 }
                return 2
            }
        }
        if let decided = fast ?? nil, decided != 2 { return decided == 0 }
        var x = a.utf8.makeIterator()
        var y = b.utf8.makeIterator()
        while true {
            switch (x.next(), y.next()) {
            case (nil, nil): return false
            case (nil, _): return true
            case (_, nil): return false
            case (let p?, let q?):
                if p == q { continue }
                if p < 0x80 || q < 0x80 { return p < q }
                return a.utf16.lexicographicallyPrecedes(b.utf16)
            }
        }
    }

    /// RFC 8785 §3.2.2.2: `"` and `\` escaped, control characters as \b \t \n \f \r or \u00xx.
    public static func writeString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Fast path: nothing to escape, copy the bytes at once.
        let copied: Bool? = text.utf8.withContiguousStorageIfAvailable { bytes in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                return false
            }
            out.append(contentsOf: bytes)
            return true
        }
        if copied == true {
            out.append(UInt8(ascii: "\""))
            return
        }
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
                out.append(contentsOf: [
                    0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)],
                    hex[Int(byte & 0xF)],
                ])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Integers below 2^53 print as themselves (counts, ids, versions): no shortest-digits work.
    @inline(__always) static func isSafeInteger(_ value: Double) -> Bool {
        value.rounded(.towardZero) == value && abs(value) < 9_007_199_254_740_992
    }

    /// Appends the decimal digits of `value`.
    static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            out.append(contentsOf: buffer[(20 - count)...])
        }
    }

    /// ECMAScript's Number::toString (ECMA-262 §6.1.6.1.20) from the shortest round-trip digits.
    public static func formatNumber(_ value: Double) -> String {
        precondition(value.isFinite, "JSON numbers are finite")
        if value == 0 { return "0" }
        if isSafeInteger(value) { return String(Int64(value)) }
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
