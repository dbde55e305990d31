/// HPACK's Huffman coding of string literals (RFC 7541 §5.2, the code of Appendix B).
///
/// An encoded string is the symbols' codes, most significant bit first, padded to an octet
/// boundary with the high bits of EOS (ones). Decoding refuses what §5.2 calls errors: padding
/// longer than 7 bits, padding that is not all ones, and the EOS symbol itself; so decoding is
/// the exact inverse of encoding — `encode(decode(x)) == x` for every `x` that decodes.
public enum Huffman {
    /// Appends the Huffman coding of `bytes` to `out`.
    public static func encode(_ bytes: some Sequence<UInt8>, into out: inout [UInt8]) {
        // Bits not yet written sit in the low `pendingBits` bits: fewer than 8 between symbols,
        // so adding a code of at most 30 bits never needs more than 64.
        var pending: UInt64 = 0
        var pendingBits = 0
        for byte in bytes {
            let length = Int(HuffmanCode.bitLengths[Int(byte)])
            pending = pending << length | UInt64(HuffmanCode.codes[Int(byte)])
            pendingBits += length
            while pendingBits >= 8 {
                pendingBits -= 8
                out.append(UInt8(truncatingIfNeeded: pending >> pendingBits))
            }
        }
        if pendingBits > 0 {
            out.append(UInt8(truncatingIfNeeded: pending << (8 - pendingBits)) | UInt8(0xFF >> pendingBits))
        }
    }

    /// The number of octets `encode` would append for `bytes`.
    public static func encodedLength(_ bytes: some Sequence<UInt8>) -> Int {
        var bits = 0
        for byte in bytes { bits += Int(HuffmanCode.bitLengths[Int(byte)]) }
        return (bits + 7) / 8
    }

    /// Decodes a Huffman-coded string, four bits at a time through `HuffmanDecodingTable`.
    public static func decode(_ bytes: some Collection<UInt8>) throws(HPACKError) -> [UInt8] {
        let table = HuffmanDecodingTable.shared
        var out: [UInt8] = []
        // The shortest code is 5 bits: at most 8 symbols per 5 octets.
        out.reserveCapacity(bytes.count * 8 / 5)
        var state = HuffmanDecodingTable.root
        for byte in bytes {
            try table.step(&state, nibble: byte >> 4, into: &out)
            try table.step(&state, nibble: byte & 0x0F, into: &out)
        }
        try table.checkPadding(endingIn: state)
        return out
    }
}
