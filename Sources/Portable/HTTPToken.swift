/// RFC 9110 §5.6.2 tokens: what a method, a header name, an extension name or a parameter is made
/// of. The hub's request parser, the `Sec-WebSocket-Extensions` grammar and the HTTP/1.1 client's
/// messages (`HTTP1`) share this one test.
public enum HTTPToken {
    /// tchar: a letter, a digit, or one of ``!#$%&'*+-.^_`|~``.
    public static func isTokenByte(_ ascii: UInt8) -> Bool {
        switch ascii {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(ascii)
        }
    }
}
