/// HPACK's prefixed integers (RFC 7541 §5.1): a value below 2^N − 1 fits the N low bits of the
/// first octet; a larger one fills them with ones and continues, 7 bits per octet, least
/// significant group first, the high bit saying whether another octet follows.
///
///       0   1   2   3   4   5   6   7
///     +---+---+---+---+---+---+---+---+
///     | ? | ? | ? |    Value (N = 5)  |   value < 31
///     +---+---+---+-------------------+
///     | ? | ? | ? | 1   1   1   1   1 |   value >= 31
///     | 1 |    (value - 31) % 128     |   repeated while more follows
///     | 0 |    the last 7 bits        |
///     +---+---------------------------+
enum HPACKInteger {
    /// The largest value a decoder accepts: more than any table size, string or index it will
    /// meet, and small enough that the arithmetic on it never overflows.
    static let maxValue = Int(Int32.max)

    /// Appends `value` with an `prefixBits`-bit prefix; `flags` holds the first octet's other
    /// (high) bits: the representation's pattern.
    static func encode(_ value: Int, prefixBits: Int, flags: UInt8, into out: inout [UInt8]) {
        precondition(value >= 0 && (1...8).contains(prefixBits), "an HPACK integer is unsigned, its prefix 1...8 bits")
        let prefixMax = (1 << prefixBits) - 1
        guard value >= prefixMax else {
            out.append(flags | UInt8(value))
            return
        }
        out.append(flags | UInt8(prefixMax))
        var rest = value - prefixMax
        while rest >= 0x80 {
            out.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        out.append(UInt8(rest))
    }

    /// Reads the integer starting at `index` (its first octet's low `prefixBits` bits), moving
    /// `index` past it.
    static func decode<Bytes: Collection<UInt8>>(
        prefixBits: Int, from bytes: Bytes, at index: inout Bytes.Index
    ) throws(HPACKError) -> Int {
        guard index < bytes.endIndex else { throw .integerTruncated }
        let prefixMax = (1 << prefixBits) - 1
        var value = Int(bytes[index]) & prefixMax
        bytes.formIndex(after: &index)
        guard value == prefixMax else { return value }
        var shift = 0
        while true {
            guard index < bytes.endIndex else { throw .integerTruncated }
            // 2^31 needs 5 groups of 7 bits; a sixth octet can only overflow or pad with zeros.
            guard shift <= 28 else { throw .integerOverflow }
            let octet = bytes[index]
            bytes.formIndex(after: &index)
            value += Int(octet & 0x7F) << shift
            guard value <= maxValue else { throw .integerOverflow }
            if octet & 0x80 == 0 { return value }
            shift += 7
        }
    }
}
