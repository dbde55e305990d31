import Testing

@testable import WSProtocol

/// permessage-deflate's negotiation (RFC 7692 §5, §7.1), both sides.
@Suite struct PerMessageDeflateNegotiationTests {
    static func offers(_ value: String) -> [ExtensionOffer]? {
        ExtensionOffer.parse(HeaderFields([("Sec-WebSocket-Extensions", value)]))
    }

    @Test("the header grammar: several offers, parameters with and without values, quoted values, empty elements")
    func grammar() {
        let parsed = Self.offers(#"permessage-deflate; client_max_window_bits, , x-webkit-deflate-frame, Permessage-Deflate ; server_max_window_bits="10""#)
        #expect(parsed?.map(\.name) == ["permessage-deflate", "x-webkit-deflate-frame", "permessage-deflate"])
        #expect(parsed?[0].parameters.map(\.name) == ["client_max_window_bits"] && parsed?[0].parameters[0].value == nil)
        #expect(parsed?[2].parameters.first?.value == "10")
        for broken in ["permessage-deflate;", "permessage-deflate; a=", "permessage-deflate x", #"p; a="open"#, "p; =1"] {
            #expect(Self.offers(broken) == nil, "\(broken)")
        }
    }

    @Test("the server takes the first acceptable offer and always answers both no_context_takeover parameters")
    func serverAccepts() {
        let agreed = DeflateParameters.accept(Self.offers("permessage-deflate; client_max_window_bits") ?? [])
        #expect(agreed?.response.headerValue == "permessage-deflate; server_no_context_takeover; client_no_context_takeover")
        // An offer it cannot take (an unknown parameter, a bad value, bits 8) falls to the next.
        let chosen = DeflateParameters.accept(
            Self.offers("permessage-deflate; mystery, permessage-deflate; server_max_window_bits=8, permessage-deflate; server_max_window_bits=10") ?? [])
        #expect(chosen?.serverMaxWindowBits == 10)
        #expect(chosen?.response.headerValue == "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10")
        for declined in [
            "permessage-deflate; server_max_window_bits", "permessage-deflate; server_max_window_bits=16",
            "permessage-deflate; server_max_window_bits=010", "permessage-deflate; client_no_context_takeover=1",
            "permessage-deflate; server_no_context_takeover; server_no_context_takeover", "x-webkit-deflate-frame",
        ] {
            #expect(DeflateParameters.accept(Self.offers(declined) ?? []) == nil, "\(declined)")
        }
    }

    @Test("the client accepts an answer its offer allows and fails one it does not")
    func clientChecks() throws {
        #expect(try DeflateParameters.agreed(by: []) == nil)
        let agreed = try DeflateParameters.agreed(by: Self.offers("permessage-deflate; server_no_context_takeover; client_max_window_bits=12") ?? [])
        #expect(agreed?.serverNoContextTakeover == true && agreed?.clientMaxWindowBits == 12)
        for wrong in ["permessage-deflate; client_max_window_bits", "permessage-deflate; mystery", "x-other", "permessage-deflate, permessage-deflate"] {
            #expect(throws: HandshakeError.self, "\(wrong)") { try DeflateParameters.agreed(by: Self.offers(wrong) ?? []) }
        }
        #expect(
            DeflateParameters.clientOffer.headerValue
                == "permessage-deflate; client_no_context_takeover; client_max_window_bits")
    }
}
