/// The static table (RFC 7541 Appendix A): 61 fields common in HTTP, at indices 1...61, before
/// the dynamic table's.
enum HPACKStaticTable {
    /// The entries; index i (1-based, as on the wire) is `fields[i - 1]`.
    static let fields: [HeaderField] = [
        HeaderField(":authority", ""),  // 1
        HeaderField(":method", "GET"),
        HeaderField(":method", "POST"),
        HeaderField(":path", "/"),
        HeaderField(":path", "/index.html"),  // 5
        HeaderField(":scheme", "http"),
        HeaderField(":scheme", "https"),
        HeaderField(":status", "200"),
        HeaderField(":status", "204"),
        HeaderField(":status", "206"),  // 10
        HeaderField(":status", "304"),
        HeaderField(":status", "400"),
        HeaderField(":status", "404"),
        HeaderField(":status", "500"),
        HeaderField("accept-charset", ""),  // 15
        HeaderField("accept-encoding", "gzip, deflate"),
        HeaderField("accept-language", ""),
        HeaderField("accept-ranges", ""),
        HeaderField("accept", ""),
        HeaderField("access-control-allow-origin", ""),  // 20
        HeaderField("age", ""),
        HeaderField("allow", ""),
        HeaderField("authorization", ""),
        HeaderField("cache-control", ""),
        HeaderField("content-disposition", ""),  // 25
        HeaderField("content-encoding", ""),
        HeaderField("content-language", ""),
        HeaderField("content-length", ""),
        HeaderField("content-location", ""),
        HeaderField("content-range", ""),  // 30
        HeaderField("content-type", ""),
        HeaderField("cookie", ""),
        HeaderField("date", ""),
        HeaderField("etag", ""),
        HeaderField("expect", ""),  // 35
        HeaderField("expires", ""),
        HeaderField("from", ""),
        HeaderField("host", ""),
        HeaderField("if-match", ""),
        HeaderField("if-modified-since", ""),  // 40
        HeaderField("if-none-match", ""),
        HeaderField("if-range", ""),
        HeaderField("if-unmodified-since", ""),
        HeaderField("last-modified", ""),
        HeaderField("link", ""),  // 45
        HeaderField("location", ""),
        HeaderField("max-forwards", ""),
        HeaderField("proxy-authenticate", ""),
        HeaderField("proxy-authorization", ""),
        HeaderField("range", ""),  // 50
        HeaderField("referer", ""),
        HeaderField("refresh", ""),
        HeaderField("retry-after", ""),
        HeaderField("server", ""),
        HeaderField("set-cookie", ""),  // 55
        HeaderField("strict-transport-security", ""),
        HeaderField("transfer-encoding", ""),
        HeaderField("user-agent", ""),
        HeaderField("vary", ""),
        HeaderField("via", ""),  // 60
        HeaderField("www-authenticate", ""),
    ]

    /// The number of entries; the dynamic table starts at index `count + 1`.
    static let count = 61

    /// The index of each field, name and value.
    static let indexOfField: [HeaderField: Int] = Dictionary(
        fields.enumerated().map { ($0.element, $0.offset + 1) }, uniquingKeysWith: min)

    /// The lowest index of each name.
    static let indexOfName: [String: Int] = Dictionary(
        fields.enumerated().map { ($0.element.name, $0.offset + 1) }, uniquingKeysWith: min)
}
