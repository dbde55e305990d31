/// HTTP/2 for the hub's own connections out (DESIGN §17: APNs and FCM): RFC 9113 framing and
/// RFC 7541 header compression as values and state machines, driven by the caller's I/O.
public enum HTTP2 {
    /// The connection preface a client sends first (RFC 9113 §3.4).
    public static let clientPreface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
}
