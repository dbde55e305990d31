/// permessage-deflate (RFC 7692) as agreed for one connection: whether each side resets its
/// compression context after every message, and each side's LZ77 window.
///
/// The server side always answers `server_no_context_takeover` (every message it sends is
/// compressed alone, so one compressed frame can go to every subscriber of a rendition) and
/// `client_no_context_takeover` (every message a client sends is too, so a loop needs no
/// per-connection inflate state between messages). RFC 7692 §7.1.1 lets a server add both to its
/// answer whether the offer had them or not.
/// Invariant: window bits are 9...15 (zlib's raw deflate has no 8-bit window: an offer that
/// demands `server_max_window_bits=8` is declined, RFC 7692 §7.1.2.1).
public struct DeflateParameters: Equatable, Sendable {
    public static let extensionName = "permessage-deflate"

    public var serverNoContextTakeover = false
    public var clientNoContextTakeover = false
    public var serverMaxWindowBits = 15
    public var clientMaxWindowBits = 15

    public init() {}

    /// The answer's element for `Sec-WebSocket-Extensions`.
    public var response: ExtensionOffer {
        var parameters: [(name: String, value: String?)] = []
        if serverNoContextTakeover { parameters.append(("server_no_context_takeover", nil)) }
        if clientNoContextTakeover { parameters.append(("client_no_context_takeover", nil)) }
        if serverMaxWindowBits < 15 { parameters.append(("server_max_window_bits", String(serverMaxWindowBits))) }
        if clientMaxWindowBits < 15 { parameters.append(("client_max_window_bits", String(clientMaxWindowBits))) }
        return ExtensionOffer(name: Self.extensionName, parameters: parameters)
    }

    /// Server side: the parameters for the first offer of permessage-deflate the hub can accept
    /// (RFC 7692 §5.1: offers are in the client's order of preference); nil when there is none.
    public static func accept(_ offers: [ExtensionOffer]) -> DeflateParameters? {
        for offer in offers where offer.name == extensionName {
            guard let requested = validated(offer, role: .offer) else { continue }
            var agreed = DeflateParameters()
            agreed.serverNoContextTakeover = true
            agreed.clientNoContextTakeover = true
            agreed.serverMaxWindowBits = requested.serverMaxWindowBits
            return agreed
        }
        return nil
    }

    /// Client side: the offer a client sends. It can take any server window, could limit its
    /// own, and resets its context after every message anyway (which a sender may always do),
    /// so it says `client_no_context_takeover` too.
    public static let clientOffer = ExtensionOffer(
        name: extensionName, parameters: [("client_no_context_takeover", nil), ("client_max_window_bits", nil)])

    /// Client side: the parameters the server's answer agreed to (nil: it declined), or an error
    /// when the answer is not one the client's offer allows (RFC 7692 §5: fail the connection).
    public static func agreed(by response: [ExtensionOffer]) throws(HandshakeError) -> DeflateParameters? {
        guard !response.isEmpty else { return nil }
        guard response.count == 1, response[0].name == extensionName,
            let agreed = validated(response[0], role: .response)
        else {
            throw HandshakeError(status: 0, reason: "the server answered extensions the client did not offer")
        }
        return agreed
    }

    private enum Role { case offer, response }

    /// The parameters an offer or answer states, or nil when it breaks RFC 7692 §7.1: an unknown
    /// or repeated parameter, a value where none belongs, bits outside 8...15 (8 is declined).
    private static func validated(_ element: ExtensionOffer, role: Role) -> DeflateParameters? {
        var result = DeflateParameters()
        var seen: Set<String> = []
        for (name, value) in element.parameters {
            guard seen.insert(name).inserted else { return nil }
            switch name {
            case "server_no_context_takeover":
                guard value == nil else { return nil }
                result.serverNoContextTakeover = true
            case "client_no_context_takeover":
                guard value == nil else { return nil }
                result.clientNoContextTakeover = true
            case "server_max_window_bits":
                guard let bits = value.flatMap(windowBits) else { return nil }
                result.serverMaxWindowBits = bits
            case "client_max_window_bits":
                // In an offer the value may be absent ("I can limit mine"); in an answer it is required.
                if let value {
                    guard let bits = windowBits(value) else { return nil }
                    result.clientMaxWindowBits = bits
                } else if role == .response {
                    return nil
                }
            default:
                return nil
            }
        }
        return result
    }

    /// `8`…`15` without leading zeros; 8 is refused (zlib cannot deflate with a 256-byte window).
    private static func windowBits(_ text: String) -> Int? {
        guard let bits = Int(text), String(bits) == text, (9...15).contains(bits) else { return nil }
        return bits
    }
}
