import HTTP2
import Testing

@Suite struct PrefaceTests {
    @Test("the client preface is RFC 9113 §3.4's 24 octets")
    func preface() {
        #expect(HTTP2.clientPreface.count == 24)
        #expect(HTTP2.clientPreface.prefix(3) == [0x50, 0x52, 0x49])
    }
}
