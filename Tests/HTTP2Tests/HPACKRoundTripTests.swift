import HTTP2
import TestSupport
import Testing

@Suite struct HPACKRoundTripTests {
    static let names = [
        ":method", ":path", ":authority", ":status", "content-type", "content-length", "apns-id",
        "apns-topic", "authorization", "cache-control", "x-custom", "x-trace",
    ]
    static let values = ["", "GET", "POST", "/", "200", "application/json", "api.push.apple.com", "no-cache"]

    /// A random field: mostly from small pools (so fields repeat and get indexed), sometimes
    /// fresh, sometimes non-ASCII, sometimes large enough to evict much or all of a table.
    static func randomField(_ random: inout SeededGenerator) -> HeaderField {
        let name =
            random.next() % 4 == 0
            ? "x-\(random.next() % 1000)" : names[Int(random.next() % UInt64(names.count))]
        let value: String
        switch random.next() % 8 {
        case 0: value = String(repeating: "v", count: Int(random.next() % 5000))
        case 1: value = "été \(random.next() % 100) ✓"
        case 2:
            let printable = (0..<Int(random.next() % 40)).map { _ in UInt8(32 + random.next() % 95) }
            value = String(decoding: printable, as: UTF8.self)
        default: value = values[Int(random.next() % UInt64(values.count))]
        }
        return HeaderField(name, value)
    }

    @Test("random header lists round-trip through an encoder and a decoder across table size changes", arguments: 0..<8)
    func randomLists(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        let encoderMax = [4096, 256, 0, 1000][Int(seed % 4)]
        var encoder = HPACKEncoder(maxTableSize: encoderMax, usesHuffman: seed % 3 != 0)
        var decoder = HPACKDecoder(maxTableSize: 4096, maxHeaderListSize: 1 << 20)
        var peerSize = 4096
        for round in 0..<200 {
            let peerSizeChanged = random.next() % 10 == 0
            if peerSizeChanged {
                peerSize = [0, 64, 100, 256, 4096][Int(random.next() % 5)]
                encoder.setPeerMaxTableSize(peerSize)
            }
            let headers = (0..<Int(random.next() % 12)).map { _ in Self.randomField(&random) }
            var block: [UInt8] = []
            encoder.encode(headers, into: &block)
            #expect(try decoder.decode(block) == headers, "seed \(seed) round \(round)")
            // The decoder's table may be larger than the encoder's (until a size update shrinks it)
            // and then keeps older entries too; the encoder's are its newest, at the same indices.
            #expect(decoder.dynamicTable.starts(with: encoder.dynamicTable), "seed \(seed) round \(round)")
            #expect(encoder.dynamicTableSize <= min(peerSize, encoderMax))
            #expect(decoder.dynamicTableSize <= decoder.dynamicTableCapacity)
            if peerSizeChanged { #expect(decoder.dynamicTableCapacity == min(peerSize, encoderMax)) }
        }
    }

    @Test("a long run of the same request keeps being indexed: after the first, one octet per field")
    func repeatedRequest() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        let request = [
            HeaderField(":method", "POST"), HeaderField(":scheme", "https"),
            HeaderField(":authority", "api.push.apple.com"), HeaderField("apns-topic", "com.example.app"),
        ]
        for round in 0..<3 {
            var block: [UInt8] = []
            encoder.encode(request, into: &block)
            #expect(try decoder.decode(block) == request)
            if round > 0 { #expect(block.count == request.count) }
        }
    }
}
