import HTTP2

/// RFC 7541 Appendix C's examples, shared by the encoder's and the decoder's tests: each header
/// block as the RFC prints it, the header list it carries, and the dynamic table after it.
enum HPACKExamples {
    /// One step of an example: a header block and what decoding it must give.
    struct Step: Sendable {
        var section: String
        var block: [UInt8]
        var headers: [HeaderField]
        /// The dynamic table afterwards, newest first.
        var table: [HeaderField]
        var tableSize: Int
    }

    static let firstRequest = [
        HeaderField(":method", "GET"), HeaderField(":scheme", "http"), HeaderField(":path", "/"),
        HeaderField(":authority", "www.example.com"),
    ]
    static let secondRequest = firstRequest + [HeaderField("cache-control", "no-cache")]
    static let thirdRequest = [
        HeaderField(":method", "GET"), HeaderField(":scheme", "https"), HeaderField(":path", "/index.html"),
        HeaderField(":authority", "www.example.com"), HeaderField("custom-key", "custom-value"),
    ]
    static let requestTables = [
        [HeaderField(":authority", "www.example.com")],
        [HeaderField("cache-control", "no-cache"), HeaderField(":authority", "www.example.com")],
        [
            HeaderField("custom-key", "custom-value"), HeaderField("cache-control", "no-cache"),
            HeaderField(":authority", "www.example.com"),
        ],
    ]

    /// C.3: three requests on one connection, strings as they are.
    static let requestsWithoutHuffman = [
        Step(
            section: "C.3.1",
            block: bytes("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"),
            headers: firstRequest, table: requestTables[0], tableSize: 57),
        Step(
            section: "C.3.2", block: bytes("8286 84be 5808 6e6f 2d63 6163 6865"),
            headers: secondRequest, table: requestTables[1], tableSize: 110),
        Step(
            section: "C.3.3",
            block: bytes("8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65"),
            headers: thirdRequest, table: requestTables[2], tableSize: 164),
    ]

    /// C.4: the same requests, strings Huffman coded.
    static let requestsWithHuffman = [
        Step(
            section: "C.4.1", block: bytes("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff"),
            headers: firstRequest, table: requestTables[0], tableSize: 57),
        Step(
            section: "C.4.2", block: bytes("8286 84be 5886 a8eb 1064 9cbf"),
            headers: secondRequest, table: requestTables[1], tableSize: 110),
        Step(
            section: "C.4.3", block: bytes("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf"),
            headers: thirdRequest, table: requestTables[2], tableSize: 164),
    ]

    static let date21 = HeaderField("date", "Mon, 21 Oct 2013 20:13:21 GMT")
    static let date22 = HeaderField("date", "Mon, 21 Oct 2013 20:13:22 GMT")
    static let location = HeaderField("location", "https://www.example.com")
    static let cachePrivate = HeaderField("cache-control", "private")
    static let gzip = HeaderField("content-encoding", "gzip")
    static let cookie = HeaderField("set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1")
    static let firstResponse = [HeaderField(":status", "302"), cachePrivate, date21, location]
    static let secondResponse = [HeaderField(":status", "307"), cachePrivate, date21, location]
    static let thirdResponse = [HeaderField(":status", "200"), cachePrivate, date22, location, gzip, cookie]
    static let responseTables = [
        [location, date21, cachePrivate, HeaderField(":status", "302")],
        [HeaderField(":status", "307"), location, date21, cachePrivate],
        [cookie, gzip, date22],
    ]
    /// The examples of C.5 and C.6 run with SETTINGS_HEADER_TABLE_SIZE 256, so entries are evicted.
    static let responseTableSize = 256

    /// C.5: three responses, strings as they are, with evictions.
    static let responsesWithoutHuffman = [
        Step(
            section: "C.5.1",
            block: bytes(
                """
                4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
                2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70
                6c65 2e63 6f6d
                """),
            headers: firstResponse, table: responseTables[0], tableSize: 222),
        Step(
            section: "C.5.2", block: bytes("4803 3330 37c1 c0bf"),
            headers: secondResponse, table: responseTables[1], tableSize: 222),
        Step(
            section: "C.5.3",
            block: bytes(
                """
                88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
                54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
                5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e
                3d31
                """),
            headers: thirdResponse, table: responseTables[2], tableSize: 215),
    ]

    /// C.6: the same responses, strings Huffman coded.
    static let responsesWithHuffman = [
        Step(
            section: "C.6.1",
            block: bytes(
                """
                4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
                2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3
                """),
            headers: firstResponse, table: responseTables[0], tableSize: 222),
        Step(
            section: "C.6.2", block: bytes("4883 640e ffc1 c0bf"),
            headers: secondResponse, table: responseTables[1], tableSize: 222),
        Step(
            section: "C.6.3",
            block: bytes(
                """
                88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
                77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
                9587 3160 65c0 03ed 4ee5 b106 3d50 07
                """),
            headers: thirdResponse, table: responseTables[2], tableSize: 215),
    ]

    /// Octets from hex digits; spaces and line breaks are ignored.
    static func bytes(_ hex: String) -> [UInt8] {
        let digits = hex.filter(\.isHexDigit).map { UInt8(String($0), radix: 16)! }
        precondition(digits.count % 2 == 0, "whole octets")
        return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
    }
}
