import HTTP2
import Portable

/// HPACK (RFC 7541) header blocks from a peer, decoded in turn on one connection's decoder.
///
/// Input: a settings byte — bits 0–1 the decoder's SETTINGS_HEADER_TABLE_SIZE (4096, 256, 64
/// or 0), bit 2 a 256-octet header list limit (else 64 KiB), bit 3 the re-encoding side's peer
/// table size changing before each block — then blocks, each a length octet and that many
/// octets (fewer when the input ends).
///
/// Properties:
/// - decoding never traps, and the decoder's table never exceeds its capacity, nor its capacity
///   the SETTINGS_HEADER_TABLE_SIZE;
/// - a block decodes the same from an array, from a slice of a larger buffer and from a
///   non-contiguous collection, and leaves the same table;
/// - every decoded header list, encoded again by a fresh encoder, decodes to the same list (but
///   for names' capitals, which the encoder lower-cases) on a fresh decoder, whose table starts
///   with the encoder's;
/// - Huffman coding: every block's octets encode to `encodedLength` octets and decode back, and
///   a block that decodes as a Huffman string encodes back to exactly itself.
enum HPACKFuzz {
    static func run(_ data: UnsafeRawBufferPointer) throws(PropertyViolation) {
        var input = FuzzInput(data)
        let settings = input.byte()
        let maxTableSize = [4096, 256, 64, 0][Int(settings & 3)]
        let maxHeaderListSize = settings & 4 == 0 ? 64 << 10 : 256
        let changesPeerTableSize = settings & 8 != 0
        let rest = input.rest()

        var arrays = HPACKDecoder(maxTableSize: maxTableSize, maxHeaderListSize: maxHeaderListSize)
        var others = arrays
        var encoder = HPACKEncoder(maxTableSize: maxTableSize)
        var reference = HPACKDecoder(maxTableSize: 4096, maxHeaderListSize: Int.max)
        var offset = 0
        var blockNumber = 0
        while offset < rest.count {
            let end = min(rest.count, offset + 1 + Int(rest[offset]))
            let block = Array(rest[(offset + 1)..<end])
            offset = end
            blockNumber += 1

            try checkHuffman(block)

            let outcome = decode(block, on: &arrays)
            // Alternately a slice of a larger buffer and a non-contiguous view of the block.
            let buffer = [0x82] + block + [0x82]
            let otherOutcome =
                blockNumber % 2 == 0
                ? decode(buffer[1..<(buffer.count - 1)], on: &others)
                : decode(block.lazy.map { $0 }, on: &others)
            try check(
                outcome == otherOutcome,
                "block \(blockNumber): an array gave \(outcome), another collection \(otherOutcome)")
            try check(
                arrays.dynamicTable == others.dynamicTable, "block \(blockNumber): the tables differ by collection")
            let (size, capacity) = (arrays.dynamicTableSize, arrays.dynamicTableCapacity)
            try check(
                size <= capacity && capacity <= maxTableSize,
                "a table of \(size) octets, capacity \(capacity), SETTINGS_HEADER_TABLE_SIZE \(maxTableSize)")

            switch outcome {
            case .success(let fields):
                if changesPeerTableSize { encoder.setPeerMaxTableSize([0, 64, 4096, 100][blockNumber % 4]) }
                var encoded: [UInt8] = []
                encoder.encode(fields, into: &encoded)
                let again = decode(encoded, on: &reference)
                let roundTrips = (try? again.get()).map { isLowerCasedNames(of: fields, $0) } ?? false
                try check(roundTrips, "\(fields) encoded as \(encoded) decoded as \(again)")
                try check(
                    reference.dynamicTable.starts(with: encoder.dynamicTable),
                    "the encoder's table \(encoder.dynamicTable) is not the newest of \(reference.dynamicTable)")
            case .failure(.headerListTooLarge):
                continue  // the table stays in step: the connection may go on
            case .failure:
                return  // the decoder's table no longer matches the peer's: the connection ends
            }
        }
    }

    typealias Outcome = Result<[HeaderField], HPACKError>

    static func decode(_ block: some Collection<UInt8>, on decoder: inout HPACKDecoder) -> Outcome {
        do throws(HPACKError) { return .success(try decoder.decode(block)) } catch { return .failure(error) }
    }

    /// Whether `lowerCased` is `fields` with names' ASCII capitals lower-cased (RFC 9113 §8.2.1).
    static func isLowerCasedNames(of fields: [HeaderField], _ lowerCased: [HeaderField]) -> Bool {
        fields.count == lowerCased.count
            && zip(fields, lowerCased).allSatisfy { field, lower in
                field.value == lower.value && field.name.caseInsensitiveEquals(lower.name)
                    && !lower.name.utf8.contains { (0x41...0x5A).contains($0) }
            }
    }

    static func checkHuffman(_ octets: [UInt8]) throws(PropertyViolation) {
        var encoded: [UInt8] = []
        Huffman.encode(octets, into: &encoded)
        try check(encoded.count == Huffman.encodedLength(octets), "encodedLength disagrees with encode for \(octets)")
        let decoded: [UInt8]
        do throws(HPACKError) { decoded = try Huffman.decode(encoded) } catch {
            throw PropertyViolation(description: "the Huffman coding of \(octets) did not decode: \(error)")
        }
        try check(decoded == octets, "\(octets) Huffman coded decoded as \(decoded)")
        guard let symbols = try? Huffman.decode(octets) else { return }
        var again: [UInt8] = []
        Huffman.encode(symbols, into: &again)
        try check(again == octets, "\(octets) decoded as Huffman to \(symbols), which encodes as \(again)")
    }
}
