/// Why a header block could not be decoded (RFC 7541 §§4–6). A peer's encoder sent something
/// HPACK does not allow, or more than this decoder accepts.
///
/// In HTTP/2 each of these is a connection error of type COMPRESSION_ERROR (RFC 9113 §4.3) —
/// after one, the decoder's table no longer matches the peer's and the decoder must not be used
/// again — except `headerListTooLarge`, which `HPACKDecoder` throws only once it has processed the
/// whole block: its table stays in step, so the connection may refuse just that stream.
public enum HPACKError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The block ended inside a prefixed integer (§5.1).
    case integerTruncated
    /// An integer is larger than 2^31 − 1, or spends more continuation octets than such a value
    /// needs (§5.1: "exceed implementation limits").
    case integerOverflow
    /// A string literal says it has `length` octets; the block has only `available` left (§5.2).
    case stringTruncated(length: Int, available: Int)
    /// A field refers to index 0, which names nothing (§6.1).
    case indexZero
    /// A field refers to `index`, past the static table's 61 entries and the dynamic table's
    /// `tableEntries − 61` (§2.3.3).
    case indexOutOfRange(index: Int, tableEntries: Int)
    /// A dynamic table size update asks for `size` octets, more than the `limit` this decoder
    /// announced in SETTINGS_HEADER_TABLE_SIZE (§6.3).
    case tableSizeUpdateTooLarge(size: Int, limit: Int)
    /// A dynamic table size update came after a field; it may only open a block (§4.2).
    case tableSizeUpdateNotAtBlockStart
    /// A Huffman-coded string contains the EOS symbol (§5.2).
    case huffmanEndOfString
    /// A Huffman-coded string ends with `bits` bits of padding; at most 7 are allowed (§5.2).
    case huffmanPaddingTooLong(bits: Int)
    /// A Huffman-coded string's padding is not the most significant bits of EOS, all ones (§5.2).
    case huffmanPaddingNotEndOfStringPrefix
    /// The decoded header list counts `size` octets (names, values and 32 per field, RFC 9113
    /// §6.5.2), more than this decoder's `limit` (its SETTINGS_MAX_HEADER_LIST_SIZE).
    case headerListTooLarge(size: Int, limit: Int)

    public var description: String {
        switch self {
        case .integerTruncated:
            "HPACK: the header block ends inside an integer"
        case .integerOverflow:
            "HPACK: an integer in the header block exceeds 2^31 - 1"
        case .stringTruncated(let length, let available):
            "HPACK: a string literal of \(length) octets has only \(available) left in the header block"
        case .indexZero:
            "HPACK: a header field refers to index 0"
        case .indexOutOfRange(let index, let tableEntries):
            "HPACK: a header field refers to index \(index); the tables hold \(tableEntries) entries"
        case .tableSizeUpdateTooLarge(let size, let limit):
            "HPACK: a table size update asks for \(size) octets; SETTINGS_HEADER_TABLE_SIZE is \(limit)"
        case .tableSizeUpdateNotAtBlockStart:
            "HPACK: a table size update follows a header field; it may only open a header block"
        case .huffmanEndOfString:
            "HPACK: a Huffman-coded string contains the EOS symbol"
        case .huffmanPaddingTooLong(let bits):
            "HPACK: a Huffman-coded string ends with \(bits) bits of padding; at most 7 are allowed"
        case .huffmanPaddingNotEndOfStringPrefix:
            "HPACK: a Huffman-coded string's padding is not all ones (a prefix of EOS)"
        case .headerListTooLarge(let size, let limit):
            "HPACK: the header list is \(size) octets; SETTINGS_MAX_HEADER_LIST_SIZE is \(limit)"
        }
    }
}
