/// Base64 (RFC 4648): the standard alphabet with `=` padding (§4: `Sec-WebSocket-Key`,
/// `Sec-WebSocket-Accept`), and the URL alphabet without padding (§5: JWS). Foundation-free, so
/// that the hub links without Foundation.
///
/// Decoding is strict about what it reads: only the alphabet's characters, and with padding only
/// a length that is a multiple of 4 with at most two `=` at the end; a last character's spare
/// bits are dropped (§3.5 lets a decoder).
public struct Base64: Sendable {
    /// The two characters after `A–Z a–z 0–9`: `+/` or `-_`.
    private let extra: (plus: UInt8, slash: UInt8)
    private let padded: Bool

    /// RFC 4648 §4: `+` and `/`, padded with `=`.
    public static let standard = Base64(extra: (UInt8(ascii: "+"), UInt8(ascii: "/")), padded: true)
    /// RFC 4648 §5: `-` and `_`, unpadded (JWS, RFC 7515 §2).
    public static let url = Base64(extra: (UInt8(ascii: "-"), UInt8(ascii: "_")), padded: false)

    private init(extra: (UInt8, UInt8), padded: Bool) {
        self.extra = extra
        self.padded = padded
    }

    private func digit(_ value: UInt32) -> UInt8 {
        switch value {
        case 0..<26: UInt8(ascii: "A") + UInt8(value)
        case 26..<52: UInt8(ascii: "a") + UInt8(value - 26)
        case 52..<62: UInt8(ascii: "0") + UInt8(value - 52)
        case 62: extra.plus
        default: extra.slash
        }
    }

    public func encode(_ bytes: some Collection<UInt8>) -> String {
        let bytes = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            for shift: UInt32 in [18, 12, 6, 0] { out.append(digit((n >> shift) & 63)) }
            i += 3
        }
        let rest = bytes.count - i
        if rest > 0 {
            var n = UInt32(bytes[i]) << 16
            if rest == 2 { n |= UInt32(bytes[i + 1]) << 8 }
            out.append(digit((n >> 18) & 63))
            out.append(digit((n >> 12) & 63))
            if rest == 2 { out.append(digit((n >> 6) & 63)) }
            if padded { out += Array(repeating: UInt8(ascii: "="), count: 3 - rest) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    public func decode(_ text: some StringProtocol) -> [UInt8]? { decode(bytes: Array(text.utf8)[...]) }

    /// One pass: each character's 6 bits join an accumulator, a byte leaves it per 8 bits.
    public func decode(bytes text: ArraySlice<UInt8>) -> [UInt8]? {
        var text = text
        if padded {
            guard text.count % 4 == 0 else { return nil }
            for _ in 0..<2 where text.last == UInt8(ascii: "=") { text.removeLast() }
        }
        guard text.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for c in text {
            let value: UInt8
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = c - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = c - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = c - UInt8(ascii: "0") + 52
            case extra.plus: value = 62
            case extra.slash: value = 63
            default: return nil
            }
            accumulator = (accumulator << 6 | UInt32(value)) & 0xFFFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return out
    }
}
