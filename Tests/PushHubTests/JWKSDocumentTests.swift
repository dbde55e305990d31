import Testing

@testable import PushHub

/// Reading a JWK Set (RFC 7517 §5) as identity providers publish it: the keys the hub verifies
/// with, and every key it must not take left out with a note naming its kid.
@Suite(
    "JWKS documents: RSA, P-256 and Ed25519 JWKs read; private, symmetric, short, off-curve and foreign keys left out")
struct JWKSDocumentTests {
    static func document(_ keys: [JSONObject]) -> [UInt8] {
        JSONWriter.write(.object(["keys": .array(keys.map(JSONValue.object))]))
    }

    @Test("PyJWT's JWKs for RSA 2048, P-256 and Ed25519 read into keys of the right kind, algorithm and kid")
    func readsEachKind() throws {
        let keys = try JWTTestKeys.shared()
        let read = try JWKSDocument(
            parsing: Self.document([keys.jwks["rsa"]!, keys.jwks["p256"]!, keys.jwks["ed25519"]!]), origin: "t")
        #expect(read.keys.map(\.kind) == [.rsa(bits: 2048), .ecP256, .ed25519])
        #expect(read.keys.map(\.algorithm) == [.rs256, .es256, .edDSA])
        #expect(read.keys.map(\.kid) == ["rsa", "p256", "ed25519"])
        #expect(read.notes.isEmpty)
        // use "sig", key_ops with "verify" and a matching alg are taken as they are.
        var annotated = keys.jwks["p256"]!
        annotated["use"] = .string("sig")
        annotated["alg"] = .string("ES256")
        annotated["key_ops"] = .array([.string("verify")])
        #expect(try JWKSDocument(parsing: Self.document([annotated]), origin: "t").keys.count == 1)
    }

    @Test(
        "each key the hub must not take is left out with a note naming its kid",
        arguments: [
            ("enc", "kid \"enc\" skipped: use is \"enc\", not \"sig\""),
            ("ops", "kid \"ops\" skipped: key_ops [\"sign\"] does not include \"verify\""),
            ("ps256", "kid \"ps256\" skipped: alg \"PS256\" with kty \"RSA\": the hub verifies RS256 with it"),
            (
                "rs256-on-ec",
                "kid \"rs256-on-ec\" skipped: alg \"RS256\" with kty \"EC\": the hub verifies ES256 with it"
            ),
            (
                "private",
                "kid \"private\" refused: the key \"private\" of t is a private key; the hub takes only public keys"
            ),
            ("oct", "kid \"oct\" refused: the key \"oct\" of t is a symmetric (oct) key;"),
            ("p384", "kid \"p384\" refused: the key \"p384\" of t is an EC key on curve \"P-384\";"),
            ("k256", "kid \"k256\" refused: the key \"k256\" of t is an EC key on curve \"secp256k1\";"),
            ("ed448", "kid \"ed448\" refused: the key \"ed448\" of t is an OKP key on curve \"Ed448\";"),
            ("rsa1024", "kid \"rsa1024\" refused: the key \"rsa1024\" of t is an RSA key of 1024 bits;"),
            (
                "off-curve",
                "kid \"off-curve\" refused: the key \"off-curve\" of t is not a usable key: the point (x, y) is not on P-256"
            ),
            (
                "short-x",
                "kid \"short-x\" refused: the key \"short-x\" of t is not a usable key: x of a P-256 key is 32 bytes, not 31"
            ),
            (
                "no-n",
                "kid \"no-n\" refused: the key \"no-n\" of t is not a usable key: \"n\" is missing or not base64url"
            ),
            ("rsa-pss", "kid \"rsa-pss\" skipped: kty \"RSA-PSS\" is not RSA, EC or OKP"),
        ])
    func leavesOut(_ kid: String, _ note: String) throws {
        let keys = try JWTTestKeys.shared()
        var jwk: JSONObject
        switch kid {
        case "enc": jwk = keys.jwks["rsa"]!; jwk["use"] = .string("enc")
        case "ops": jwk = keys.jwks["rsa"]!; jwk["key_ops"] = .array([.string("sign")])
        case "ps256": jwk = keys.jwks["rsa"]!; jwk["alg"] = .string("PS256")
        case "rs256-on-ec": jwk = keys.jwks["p256"]!; jwk["alg"] = .string("RS256")
        case "private": jwk = keys.jwks["p256"]!; jwk["d"] = .string("AAAA")
        case "oct": jwk = ["kty": .string("oct"), "k": .string("c2VjcmV0")]
        case "p384", "k256", "ed448", "rsa1024": jwk = keys.jwks[kid]!
        case "off-curve":
            jwk = keys.jwks["p256"]!
            var y = Base64URL.decode(jwk["y"]!.stringValue!)!
            y[31] ^= 1
            jwk["y"] = .string(Base64URL.encode(y))
        case "short-x":
            jwk = keys.jwks["p256"]!
            jwk["x"] = .string(Base64URL.encode(Array(Base64URL.decode(jwk["x"]!.stringValue!)!.dropFirst())))
        case "no-n": jwk = keys.jwks["rsa"]!; jwk["n"] = nil
        default: jwk = keys.jwks["rsa"]!; jwk["kty"] = .string("RSA-PSS")
        }
        jwk["kid"] = .string(kid)
        let read = try JWKSDocument(parsing: Self.document([jwk, keys.jwks["ed25519"]!]), origin: "t")
        #expect(read.keys.map(\.kid) == ["ed25519"])
        #expect(read.notes.count == 1)
        #expect(read.notes.first?.hasPrefix(note) == true, "\(read.notes)")
    }

    @Test("an answer that is not a JWKS, has too many keys or no usable key is refused as a whole")
    func refusedDocuments() throws {
        let keys = try JWTTestKeys.shared()
        #expect(throws: JWKSDocument.Failure.noKeys) {
            try JWKSDocument(parsing: Array("{\"kid\":1}".utf8), origin: "t")
        }
        #expect(throws: JWKSDocument.Failure.noKeys) { try JWKSDocument(parsing: Array("[]".utf8), origin: "t") }
        #expect(throws: JWKSDocument.Failure.self) { try JWKSDocument(parsing: Array("<html>".utf8), origin: "t") }
        #expect(throws: JWKSDocument.Failure.noUsableKey([])) {
            try JWKSDocument(parsing: Self.document([]), origin: "t")
        }
        var private256 = keys.jwks["p256"]!
        private256["d"] = .string("AAAA")
        #expect(throws: JWKSDocument.Failure.self) {
            try JWKSDocument(parsing: Self.document([private256]), origin: "t")
        }
        let many = (0...100).map { index -> JSONObject in
            var jwk = keys.jwks["ed25519"]!
            jwk["kid"] = .string("k\(index)")
            return jwk
        }
        #expect(throws: JWKSDocument.Failure.tooManyKeys(101)) {
            try JWKSDocument(parsing: Self.document(many), origin: "t")
        }
        #expect(try JWKSDocument(parsing: Self.document(Array(many.prefix(100))), origin: "t").keys.count == 100)
        #expect(throws: JWKSDocument.Failure.self) {
            try JWKSDocument(parsing: [UInt8](repeating: 0x20, count: JWKSDocument.maximumBytes + 1), origin: "t")
        }
    }

    @Test("a kid that is not a short printable string refuses that key, without echoing it")
    func badKid() throws {
        let keys = try JWTTestKeys.shared()
        var jwk = keys.jwks["rsa"]!
        jwk["kid"] = .string("evil\u{1B}[31m")
        let read = try JWKSDocument(parsing: Self.document([jwk, keys.jwks["p256"]!]), origin: "t")
        #expect(read.keys.map(\.kid) == ["p256"])
        #expect(read.notes.count == 1 && read.notes[0].contains("\u{1B}") == false)
    }
}
