/// One header field of an HTTP/2 header list (RFC 7541 §1.3), as an HPACK encoder takes it and a
/// decoder gives it back.
///
/// Names are lower-case on the wire (RFC 9113 §8.2.1): `HPACKEncoder` lower-cases ASCII
/// capitals it is given; `HPACKDecoder` passes names on as received, and the connection decides
/// whether they are well-formed.
public struct HeaderField: Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }

    /// The field's size as HPACK and HTTP/2 count it (RFC 7541 §4.1, RFC 9113 §6.5.2): the
    /// octets of its name and value plus 32 for the overhead of an entry.
    public var hpackSize: Int { name.utf8.count + value.utf8.count + HeaderField.entryOverhead }

    /// The 32 octets RFC 7541 §4.1 adds to every entry's name and value.
    static let entryOverhead = 32

    public var description: String { "\(name): \(value)" }
}
