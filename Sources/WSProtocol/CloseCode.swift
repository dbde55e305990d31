/// A close code (RFC 6455 §7.4). Codes the hub sends, and why:
///
/// | code | name | the hub sends it when |
/// |------|------|------------------------|
/// | 1000 | normal | it answers a peer's close that carried no code |
/// | 1001 | goingAway | it shuts down (SIGTERM); the client should reconnect elsewhere or later |
/// | 1002 | protocolError | the peer broke RFC 6455 framing |
/// | 1007 | invalidPayload | a text message or close reason was not UTF-8 |
/// | 1008 | policyViolation | a policy limit: hello timeout, outbound hard limit; reconnect with backoff |
/// | 1009 | messageTooBig | a message or frame exceeded the configured limit |
/// | 1011 | internalError | the hub failed; the client should reconnect |
///
/// Invariant: any `UInt16` can be represented (a peer may send anything); `isValidOnWire`
/// says whether §7.4.1/§7.4.2 allow it in a close frame.
public struct CloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let normal = CloseCode(1000)
    public static let goingAway = CloseCode(1001)
    public static let protocolError = CloseCode(1002)
    public static let unsupportedData = CloseCode(1003)
    /// Reserved: "no status code was present"; never on the wire (§7.4.1).
    public static let noStatusReceived = CloseCode(1005)
    /// Reserved: "closed abnormally"; never on the wire (§7.4.1).
    public static let abnormalClosure = CloseCode(1006)
    public static let invalidPayload = CloseCode(1007)
    public static let policyViolation = CloseCode(1008)
    public static let messageTooBig = CloseCode(1009)
    public static let mandatoryExtension = CloseCode(1010)
    public static let internalError = CloseCode(1011)

    /// Whether an endpoint may put this code in a close frame: the codes defined by RFC 6455,
    /// the IANA-registered 1012–1014, and the application ranges 3000–4999. 1004, 1005, 1006 and
    /// 1015 are reserved; everything below 1000 and in 1016–2999 is unassigned.
    public var isValidOnWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    public var description: String { String(rawValue) }
}
