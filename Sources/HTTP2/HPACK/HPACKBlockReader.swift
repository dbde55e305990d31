/// Reads the primitives of a header block front to back: prefixed integers (§5.1) and string
/// literals (§5.2), from contiguous memory so that decoding is one non-generic, optimised path.
///
/// Invariant: `index` stays within `0...bytes.count`, and every read checks it against
/// `bytes.count` first (the buffer's own checks vanish in release builds): a representation cut
/// short is an error, never a read past the block.
struct HPACKBlockReader {
    /// A string literal as decoded, and how many octets it has (before any UTF-8 repair: the
    /// size that counts for tables and header lists).
    struct DecodedString {
        var string: String
        var octets: Int
    }

    let bytes: UnsafeBufferPointer<UInt8>
    private(set) var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The next octet, not consumed; nil at the end of the block.
    var nextOctet: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func readInteger(prefixBits: Int) throws(HPACKError) -> Int {
        try HPACKInteger.decode(prefixBits: prefixBits, from: bytes, at: &index)
    }

    /// A string literal: the H flag and a 7-bit-prefix length, then that many octets, Huffman
    /// coded when H is set. Octets that are not UTF-8 become U+FFFD (HTTP/2 field names and
    /// values are ASCII; the connection judges their contents, RFC 9113 §8.2.1).
    mutating func readString() throws(HPACKError) -> DecodedString {
        let isHuffmanCoded = (nextOctet ?? 0) & 0x80 != 0
        let length = try readInteger(prefixBits: 7)
        let available = bytes.count - index
        guard length <= available else { throw .stringTruncated(length: length, available: available) }
        let end = index + length
        let literal = bytes[index..<end]
        index = end
        guard isHuffmanCoded else {
            return DecodedString(string: String(decoding: literal, as: UTF8.self), octets: length)
        }
        let decoded = try Huffman.decode(literal)
        return DecodedString(string: String(decoding: decoded, as: UTF8.self), octets: decoded.count)
    }
}
