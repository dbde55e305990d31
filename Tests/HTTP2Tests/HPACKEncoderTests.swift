import Testing

@testable import HTTP2

@Suite struct HPACKEncoderTests {
    /// Encodes each step's header list in turn on one encoder, checking the block and the table.
    func encodeInTurn(_ steps: [HPACKExamples.Step], encoder: HPACKEncoder) {
        var encoder = encoder
        for step in steps {
            var block: [UInt8] = []
            encoder.encode(step.headers, into: &block)
            #expect(block == step.block, "\(step.section)")
            #expect(encoder.dynamicTable == step.table, "\(step.section)")
            #expect(encoder.dynamicTableSize == step.tableSize, "\(step.section)")
        }
    }

    @Test("C.2.1–C.2.4: each representation of a literal, and an indexed field")
    func representations() {
        var encoder = HPACKEncoder(usesHuffman: false)
        var block: [UInt8] = []
        encoder.encode([HeaderField("custom-key", "custom-header")], into: &block)
        #expect(block == HPACKExamples.bytes("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572"))
        #expect(encoder.dynamicTable == [HeaderField("custom-key", "custom-header")])

        var fresh = HPACKEncoder(usesHuffman: false)
        block = []
        fresh.encode(HeaderField(":path", "/sample/path"), indexing: .withoutIndexing, into: &block)
        #expect(block == HPACKExamples.bytes("040c 2f73 616d 706c 652f 7061 7468"))
        block = []
        fresh.encode(HeaderField("password", "secret"), indexing: .neverIndexed, into: &block)
        #expect(block == HPACKExamples.bytes("1008 7061 7373 776f 7264 0673 6563 7265 74"))
        #expect(fresh.dynamicTable.isEmpty)
        block = []
        fresh.encode([HeaderField(":method", "GET")], into: &block)
        #expect(block == [0x82])
    }

    @Test("C.3: three requests without Huffman coding")
    func requestsWithoutHuffman() {
        encodeInTurn(HPACKExamples.requestsWithoutHuffman, encoder: HPACKEncoder(usesHuffman: false))
    }

    @Test("C.4: three requests with Huffman coding")
    func requestsWithHuffman() {
        encodeInTurn(HPACKExamples.requestsWithHuffman, encoder: HPACKEncoder())
    }

    @Test("C.5: three responses without Huffman coding in a 256-octet table, with evictions")
    func responsesWithoutHuffman() {
        let encoder = HPACKEncoder(maxTableSize: HPACKExamples.responseTableSize, usesHuffman: false)
        encodeInTurn(HPACKExamples.responsesWithoutHuffman, encoder: encoder)
    }

    @Test("C.6: three responses with Huffman coding in a 256-octet table, with evictions")
    func responsesWithHuffman() {
        encodeInTurn(HPACKExamples.responsesWithHuffman, encoder: HPACKEncoder(maxTableSize: 256))
    }

    @Test("authorization is a literal never indexed, every time, and never enters a table")
    func authorizationNeverIndexed() throws {
        var encoder = HPACKEncoder(usesHuffman: false)
        var decoder = HPACKDecoder()
        let headers = [HeaderField(":method", "POST"), HeaderField("authorization", "bearer abc")]
        for _ in 0..<2 {
            var block: [UInt8] = []
            encoder.encode(headers, into: &block)
            // 0x83: :method POST; 0x1f 0x08: never indexed, name index 15 + 8 = 23; 0x0a "bearer abc".
            #expect(block == [0x83, 0x1F, 0x08, 0x0A] + Array("bearer abc".utf8))
            #expect(try decoder.decode(block) == headers)
        }
        #expect(encoder.dynamicTable.isEmpty && decoder.dynamicTable.isEmpty)
        // Also when Huffman coded, and under any capitalisation.
        var huffman = HPACKEncoder()
        var block: [UInt8] = []
        huffman.encode([HeaderField("Authorization", "bearer abc")], into: &block)
        #expect(block.prefix(2) == [0x1F, 0x08] && huffman.dynamicTable.isEmpty)
    }

    @Test("a field larger than the table is a literal without indexing; the table keeps its entries")
    func tooLargeToIndex() throws {
        var encoder = HPACKEncoder(maxTableSize: 100, usesHuffman: false)
        var block: [UInt8] = []
        encoder.encode([HeaderField("x-a", "1")], into: &block)
        let big = HeaderField("x-big", String(repeating: "v", count: 64))  // 5 + 64 + 32 = 101 > 100
        block = []
        encoder.encode([big], into: &block)
        #expect(block.first == 0x00)  // without indexing, new name
        #expect(encoder.dynamicTable == [HeaderField("x-a", "1")])
    }

    @Test("capital letters in names are lower-cased on the wire")
    func lowerCasesNames() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        var block: [UInt8] = []
        encoder.encode([HeaderField("Content-Type", "Application/JSON"), HeaderField("X-Ümlaut", "v")], into: &block)
        let decoded = try decoder.decode(block)
        #expect(decoded == [HeaderField("content-type", "Application/JSON"), HeaderField("x-Ümlaut", "v")])
    }

    @Test("a new peer table size is signalled once, at the next block's start, and shrinks the table")
    func peerTableSize() throws {
        var encoder = HPACKEncoder(usesHuffman: false)
        var decoder = HPACKDecoder()
        var block: [UInt8] = []
        encoder.encode(HPACKExamples.secondRequest, into: &block)
        _ = try decoder.decode(block)
        #expect(encoder.dynamicTableSize == 110)

        encoder.setPeerMaxTableSize(100)
        block = []
        encoder.encode([HeaderField(":method", "GET")], into: &block)
        #expect(block == [0x3F, 0x45, 0x82])  // size update 31 + 69 = 100, then :method GET
        #expect(encoder.dynamicTable == [HeaderField("cache-control", "no-cache")])
        #expect(try decoder.decode(block) == [HeaderField(":method", "GET")])
        #expect(decoder.dynamicTable == encoder.dynamicTable && decoder.dynamicTableCapacity == 100)

        block = []
        encoder.encode([HeaderField(":method", "GET")], into: &block)
        #expect(block == [0x82])  // signalled once
    }

    @Test("a table shrunk then grown between blocks signals the smallest size, then the final one")
    func shrinkThenGrow() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        var block: [UInt8] = []
        encoder.encode(HPACKExamples.firstRequest, into: &block)
        _ = try decoder.decode(block)
        encoder.setPeerMaxTableSize(0)
        encoder.setPeerMaxTableSize(8192)  // above our 4096: ours stays the limit
        encoder.setPeerMaxTableSize(4096)
        block = []
        encoder.encode([HeaderField(":authority", "www.example.com")], into: &block)
        // 0x20: size 0 (evicts everything); 0x3f 0xe1 0x1f: 4096; then the literal again, indexed.
        #expect(block.prefix(5) == [0x20, 0x3F, 0xE1, 0x1F, 0x41])
        #expect(try decoder.decode(block) == [HeaderField(":authority", "www.example.com")])
        #expect(decoder.dynamicTable == encoder.dynamicTable && encoder.dynamicTable.count == 1)
    }

    @Test("a zero-size table indexes nothing")
    func zeroTable() throws {
        var encoder = HPACKEncoder(maxTableSize: 0)
        var decoder = HPACKDecoder(maxTableSize: 0)
        for _ in 0..<2 {
            var block: [UInt8] = []
            encoder.encode(HPACKExamples.thirdRequest, into: &block)
            #expect(try decoder.decode(block) == HPACKExamples.thirdRequest)
            #expect(encoder.dynamicTable.isEmpty)
        }
    }
}
