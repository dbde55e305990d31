import HTTP2
import Testing

@Suite struct HPACKDecoderTests {
    /// Decodes each step in turn on one decoder, checking the header list and the table after it.
    func decodeInTurn(_ steps: [HPACKExamples.Step], maxTableSize: Int = 4096) throws {
        var decoder = HPACKDecoder(maxTableSize: maxTableSize)
        for step in steps {
            #expect(try decoder.decode(step.block) == step.headers, "\(step.section)")
            #expect(decoder.dynamicTable == step.table, "\(step.section)")
            #expect(decoder.dynamicTableSize == step.tableSize, "\(step.section)")
        }
    }

    @Test("C.2.1: a literal with indexing enters the dynamic table")
    func literalWithIndexing() throws {
        var decoder = HPACKDecoder()
        // 0x40: literal with indexing, new name; 0x0a "custom-key"; 0x0d "custom-header".
        let block = HPACKExamples.bytes("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572")
        #expect(try decoder.decode(block) == [HeaderField("custom-key", "custom-header")])
        #expect(decoder.dynamicTable == [HeaderField("custom-key", "custom-header")])
        #expect(decoder.dynamicTableSize == 55)
    }

    @Test("C.2.2: a literal without indexing leaves the table empty")
    func literalWithoutIndexing() throws {
        var decoder = HPACKDecoder()
        // 0x04: without indexing, name index 4 (:path); 0x0c "/sample/path".
        let block = HPACKExamples.bytes("040c 2f73 616d 706c 652f 7061 7468")
        #expect(try decoder.decode(block) == [HeaderField(":path", "/sample/path")])
        #expect(decoder.dynamicTable.isEmpty && decoder.dynamicTableSize == 0)
    }

    @Test("C.2.3: a literal never indexed leaves the table empty")
    func literalNeverIndexed() throws {
        var decoder = HPACKDecoder()
        // 0x10: never indexed, new name; 0x08 "password"; 0x06 "secret".
        let block = HPACKExamples.bytes("1008 7061 7373 776f 7264 0673 6563 7265 74")
        #expect(try decoder.decode(block) == [HeaderField("password", "secret")])
        #expect(decoder.dynamicTable.isEmpty && decoder.dynamicTableSize == 0)
    }

    @Test("C.2.4: an indexed field comes from the static table")
    func indexed() throws {
        var decoder = HPACKDecoder()
        #expect(try decoder.decode([0x82]) == [HeaderField(":method", "GET")])
        #expect(decoder.dynamicTable.isEmpty)
    }

    @Test("C.3: three requests without Huffman coding, and the table after each")
    func requestsWithoutHuffman() throws { try decodeInTurn(HPACKExamples.requestsWithoutHuffman) }

    @Test("C.4: three requests with Huffman coding, and the table after each")
    func requestsWithHuffman() throws { try decodeInTurn(HPACKExamples.requestsWithHuffman) }

    @Test("C.5: three responses without Huffman coding in a 256-octet table, with evictions")
    func responsesWithoutHuffman() throws {
        try decodeInTurn(HPACKExamples.responsesWithoutHuffman, maxTableSize: HPACKExamples.responseTableSize)
    }

    @Test("C.6: three responses with Huffman coding in a 256-octet table, with evictions")
    func responsesWithHuffman() throws {
        try decodeInTurn(HPACKExamples.responsesWithHuffman, maxTableSize: HPACKExamples.responseTableSize)
    }

    @Test("decoding depends on the octets, not on the collection or slice holding them")
    func collections() throws {
        let steps = HPACKExamples.responsesWithHuffman
        var arrays = HPACKDecoder(maxTableSize: 256)
        var slices = HPACKDecoder(maxTableSize: 256)
        var lazyViews = HPACKDecoder(maxTableSize: 256)
        var anyCollections = HPACKDecoder(maxTableSize: 256)
        for step in steps {
            // The block in the middle of a larger buffer, as a frame's payload slice would be.
            let buffer = [0x00, 0x09, 0x01] + step.block + [0x82, 0x82]
            let slice = buffer[3..<(3 + step.block.count)]
            #expect(try arrays.decode(step.block) == step.headers)
            #expect(try slices.decode(slice) == step.headers)
            #expect(try lazyViews.decode(step.block.lazy.map { $0 }) == step.headers)  // not contiguous
            #expect(try anyCollections.decode(AnyCollection(slice)) == step.headers)
        }
        for decoder in [slices, lazyViews, anyCollections] {
            #expect(decoder.dynamicTable == arrays.dynamicTable)
            #expect(decoder.dynamicTableSize == arrays.dynamicTableSize)
        }
    }

    @Test("a table size update at a block's start shrinks the table, evicting the oldest entries")
    func sizeUpdate() throws {
        var decoder = HPACKDecoder()
        _ = try decoder.decode(HPACKExamples.requestsWithoutHuffman[0].block)
        _ = try decoder.decode(HPACKExamples.requestsWithoutHuffman[1].block)
        // 0x3f 0x47: a size update to 31 + 71 = 102, then :method GET.
        #expect(try decoder.decode([0x3F, 0x47, 0x82]) == [HeaderField(":method", "GET")])
        #expect(decoder.dynamicTableCapacity == 102)
        #expect(decoder.dynamicTable == [HeaderField("cache-control", "no-cache")])
        #expect(decoder.dynamicTableSize == 53)
        // Two updates may open a block: down to 0 (emptying the table), then up to 75.
        #expect(try decoder.decode([0x20, 0x3F, 0x2C]) == [])
        #expect(decoder.dynamicTable.isEmpty && decoder.dynamicTableCapacity == 75)
        // An entry larger than the capacity empties the table and is not kept (§4.4).
        let big = HeaderField("x-big", String(repeating: "v", count: 50))  // 5 + 50 + 32 = 87 > 75
        var block: [UInt8] = [0x40, 0x05] + Array("x-big".utf8) + [0x32] + Array(big.value.utf8)
        #expect(try decoder.decode(block) == [big])
        #expect(decoder.dynamicTable.isEmpty && decoder.dynamicTableSize == 0)
        block = [0x3F, 0xE1, 0x1F]  // back up to 4096 = 31 + 0x61 + 0x1f * 128
        #expect(try decoder.decode(block) == [] && decoder.dynamicTableCapacity == 4096)
    }

    @Test("a table size update above SETTINGS_HEADER_TABLE_SIZE is an error")
    func sizeUpdateTooLarge() throws {
        var decoder = HPACKDecoder(maxTableSize: 256)
        #expect(throws: HPACKError.tableSizeUpdateTooLarge(size: 257, limit: 256)) {
            try decoder.decode([0x3F, 0xE2, 0x01])  // 31 + 0x62 + 128 = 257
        }
        var small = HPACKDecoder(maxTableSize: 0)
        #expect(throws: HPACKError.tableSizeUpdateTooLarge(size: 1, limit: 0)) { try small.decode([0x21]) }
        #expect(try small.decode([0x20, 0x82]) == [HeaderField(":method", "GET")])
    }

    @Test("a table size update after a field is an error")
    func sizeUpdateNotAtStart() {
        var decoder = HPACKDecoder()
        #expect(throws: HPACKError.tableSizeUpdateNotAtBlockStart) { try decoder.decode([0x82, 0x3F, 0x47]) }
    }

    @Test("index 0 as an indexed field is an error (as a literal's name index it means a new name)")
    func indexZero() throws {
        var decoder = HPACKDecoder()
        #expect(throws: HPACKError.indexZero) { try decoder.decode([0x80]) }
        var other = HPACKDecoder()
        // 0x00: literal without indexing, name index 0 — the name follows as a string.
        #expect(try other.decode([0x00, 0x01, 0x61, 0x01, 0x62]) == [HeaderField("a", "b")])
    }

    @Test("an index past both tables is an error that says how many entries there are")
    func indexOutOfRange() throws {
        var decoder = HPACKDecoder()
        #expect(throws: HPACKError.indexOutOfRange(index: 62, tableEntries: 61)) { try decoder.decode([0xBE]) }
        var withOne = HPACKDecoder()
        _ = try withOne.decode(HPACKExamples.requestsWithoutHuffman[0].block)
        #expect(try withOne.decode([0xBE]) == [HeaderField(":authority", "www.example.com")])
        #expect(throws: HPACKError.indexOutOfRange(index: 63, tableEntries: 62)) { try withOne.decode([0xBF]) }
        var names = HPACKDecoder()
        // A literal whose name index (4-bit prefix: 15 + 0x30 = 63) is past the tables.
        #expect(throws: HPACKError.indexOutOfRange(index: 63, tableEntries: 61)) {
            try names.decode([0x0F, 0x30, 0x01, 0x61])
        }
    }

    @Test("a block cut anywhere inside a representation is an error, never a partial list")
    func truncatedBlocks() {
        let block = HPACKExamples.responsesWithHuffman[0].block
        for cut in 1..<block.count {
            var decoder = HPACKDecoder(maxTableSize: 256)
            let prefix = Array(block[..<cut])
            do {
                let fields = try decoder.decode(prefix)
                // Only a cut between two representations decodes, to the fields before it.
                #expect(HPACKExamples.firstResponse.starts(with: fields), "cut \(cut)")
                let boundaries = [4, 11, 35]  // after 48 82 6402, 58 85 aec3771a4b and 61 96 (22 octets)
                #expect(boundaries.contains(cut), "cut \(cut) decoded")
            } catch {
                let expected = error == .integerTruncated || isStringTruncated(error)
                #expect(expected, "cut \(cut): \(error)")
            }
        }
    }

    func isStringTruncated(_ error: HPACKError) -> Bool {
        if case .stringTruncated = error { return true }
        return false
    }

    @Test("a string literal longer than the rest of the block is an error")
    func stringTruncated() {
        var decoder = HPACKDecoder()
        #expect(throws: HPACKError.stringTruncated(length: 3, available: 2)) {
            try decoder.decode([0x04, 0x03, 0x2F, 0x61])  // :path, "/a" of 3
        }
        var huge = HPACKDecoder()
        #expect(throws: HPACKError.stringTruncated(length: 2_147_483_647, available: 0)) {
            try huge.decode([0x04, 0x7F, 0x80, 0xFF, 0xFF, 0xFF, 0x07])  // 127 + 2^31 - 128
        }
    }

    @Test("an integer overflow in an index or a length is an error")
    func integerOverflow() {
        var decoder = HPACKDecoder()
        #expect(throws: HPACKError.integerOverflow) { try decoder.decode([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) }
        var other = HPACKDecoder()
        #expect(throws: HPACKError.integerOverflow) { try other.decode([0x04, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) }
    }

    @Test("bad Huffman padding or EOS in a literal is an error")
    func badHuffman() {
        var decoder = HPACKDecoder()
        #expect(throws: HPACKError.huffmanPaddingTooLong(bits: 8)) { try decoder.decode([0x04, 0x81, 0xFF]) }
        var other = HPACKDecoder()
        #expect(throws: HPACKError.huffmanPaddingNotEndOfStringPrefix) { try other.decode([0x04, 0x81, 0x1E]) }
        var third = HPACKDecoder()
        #expect(throws: HPACKError.huffmanEndOfString) { try third.decode([0x04, 0x84, 0xFF, 0xFF, 0xFF, 0xFF]) }
    }

    @Test("a header list above SETTINGS_MAX_HEADER_LIST_SIZE is an error, and the table stays in step")
    func headerListTooLarge() throws {
        let steps = HPACKExamples.requestsWithHuffman
        // The third request counts 42 + 44 + 48 + 57 + 54 = 245 octets (name + value + 32 each).
        var exact = HPACKDecoder(maxHeaderListSize: 245)
        for step in steps { #expect(try exact.decode(step.block) == step.headers) }

        var decoder = HPACKDecoder(maxHeaderListSize: 244)
        _ = try decoder.decode(steps[0].block)
        _ = try decoder.decode(steps[1].block)
        #expect(throws: HPACKError.headerListTooLarge(size: 245, limit: 244)) { try decoder.decode(steps[2].block) }
        // The block's literal with indexing was still added: the next block's indices still agree.
        #expect(decoder.dynamicTable == steps[2].table)
        #expect(try decoder.decode([0xBE]) == [HeaderField("custom-key", "custom-value")])
    }

    @Test("a block of many references to one large entry stops collecting at the limit")
    func amplification() throws {
        var decoder = HPACKDecoder(maxHeaderListSize: 64 << 10)
        let value = String(repeating: "x", count: 4000)
        var block: [UInt8] = [0x40, 0x01, 0x61, 0x7F, 0xA1, 0x1E]  // "a", 127 + 0x21 + 30 * 128 = 4000 octets
        block += Array(value.utf8) + [UInt8](repeating: 0xBE, count: 4000)  // then index 62, 4000 times
        #expect(throws: HPACKError.headerListTooLarge(size: 4001 * (1 + 4000 + 32), limit: 64 << 10)) {
            try decoder.decode(block)
        }
    }

    @Test("octets that are not UTF-8 become U+FFFD, and the table counts the octets received")
    func notUTF8() throws {
        var decoder = HPACKDecoder()
        // Literal with indexing, new name "a", value 0xFF 0xFE.
        #expect(try decoder.decode([0x40, 0x01, 0x61, 0x02, 0xFF, 0xFE]) == [HeaderField("a", "\u{FFFD}\u{FFFD}")])
        #expect(decoder.dynamicTableSize == 1 + 2 + 32)
    }
}
