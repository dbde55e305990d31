/// Reads the primitives of a header block front to back: prefixed integers (§5.1) and string
/// literals (§5.2). Never reads past the end: a representation cut short is an error.
struct HPACKBlockReader<Bytes: Collection<UInt8>> {
    /// A string literal as decoded, and how many octets it has (before any UTF-8 repair: the
    /// size that counts for tables and header lists).
    struct DecodedString {
        var string: String
        var octets: Int
    }

    let bytes: Bytes
    private(set) var index: Bytes.Index

    init(_ bytes: Bytes) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    /// The next octet, not consumed; nil at the end of the block.
    var nextOctet: UInt8? { index < bytes.endIndex ? bytes[index] : nil }

    mutating func readInteger(prefixBits: Int) throws(HPACKError) -> Int {
        try HPACKInteger.decode(prefixBits: prefixBits, from: bytes, at: &index)
    }

    /// A string literal: the H flag and a 7-bit-prefix length, then that many octets, Huffman
    /// coded when H is set. Octets that are not UTF-8 become U+FFFD (HTTP/2 field names and
    /// values are ASCII; the connection judges their contents, RFC 9113 §8.2.1).
    mutating func readString() throws(HPACKError) -> DecodedString {
        let isHuffmanCoded = (nextOctet ?? 0) & 0x80 != 0
        let length = try readInteger(prefixBits: 7)
        guard let end = bytes.index(index, offsetBy: length, limitedBy: bytes.endIndex) else {
            throw .stringTruncated(length: length, available: bytes.distance(from: index, to: bytes.endIndex))
        }
        let literal = bytes[index..<end]
        index = end
        guard isHuffmanCoded else {
            return DecodedString(string: String(decoding: literal, as: UTF8.self), octets: length)
        }
        let decoded = try Huffman.decode(literal)
        return DecodedString(string: String(decoding: decoded, as: UTF8.self), octets: decoded.count)
    }
}
