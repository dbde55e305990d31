import COpenSSL
import Foundation
import Testing

@testable import PushHub

/// Client tokens signed with public keys (DESIGN §18): each algorithm verifies with its key, and
/// every known attack on JWT verification is refused with a sentence that says why.
@Suite("JWT with public keys: RS256, ES256, EdDSA; algorithm confusion and the other attacks")
struct JWTPublicKeyTests {
    static let now = 1_900_000_000
    static let secret = Array("the-hub-hs256-secret".utf8)
    static let claims: JSONObject = ["sub": .string("u17"), "exp": .number(Double(now + 600))]

    /// A verifier with the HS256 secret, the PEM keys `pem` (no kid) and the JWKs `jwk` (kid =
    /// their name), as a hub with `--jwt-public-key` and `--jwt-jwks` has them.
    static func verifier(pem: [String] = [], jwk: [String] = [], requireExpiry: Bool = true) throws -> JWTVerifier {
        let keys = try JWTTestKeys.shared()
        let files = try pem.map { try JWTKey(publicKeyFile: keys.publicKey($0)) }
        let published = try jwk.map { name -> JWTKey in
            guard case .key(let key) = JWK.read(.object(keys.jwks[name]!), origin: "the test JWKS") else {
                throw SelfCheckFailure(description: "the JWK \(name) was not read")
            }
            return key
        }
        let set = JWTKeySet(configured: [JWTKey(secret: secret)] + files, published: published)
        return JWTVerifier(keys: JWTKeyStore(set, fetchesKeys: !jwk.isEmpty), requireExpiry: requireExpiry)
    }

    static let signers: [(JWTAlgorithm, String)] = [(.rs256, "rsa"), (.es256, "p256"), (.edDSA, "ed25519")]

    // MARK: - Each algorithm

    @Test("RS256, ES256 and EdDSA tokens verify with their PEM public key, and with their JWK by kid")
    func eachAlgorithmVerifies() throws {
        let keys = try JWTTestKeys.shared()
        for (alg, name) in Self.signers {
            let pem = try Self.verifier(pem: [name])
            #expect(try pem.verify(keys.token(Self.claims, alg: alg, key: name), now: Self.now).subject == "u17")
            let jwks = try Self.verifier(jwk: ["rsa", "p256", "ed25519"])
            let named = try keys.token(Self.claims, alg: alg, key: name, kid: name)
            #expect(try jwks.verify(named, now: Self.now).subject == "u17", "\(alg)")
            // Without a kid, every key of the token's algorithm is tried.
            #expect(try jwks.verify(keys.token(Self.claims, alg: alg, key: name), now: Self.now).subject == "u17")
        }
        let hs256 = JWTVerifier.sign(Self.claims, secret: Self.secret)
        #expect(try Self.verifier(pem: ["rsa"], jwk: ["p256"]).verify(hs256, now: Self.now).subject == "u17")
    }

    @Test("an RSA PUBLIC KEY (PKCS#1) file and a certificate give the same RSA key as its PUBLIC KEY file")
    func pemForms() throws {
        let keys = try JWTTestKeys.shared()
        let token = try keys.token(Self.claims, alg: .rs256, key: "rsa")
        for path in [keys.rsaPKCS1, keys.rsaCertificate, keys.publicKey("rsa")] {
            let key = try JWTKey(publicKeyFile: path)
            #expect(key.kind == .rsa(bits: 2048) && key.algorithm == .rs256 && key.kid == nil)
            let verifier = JWTVerifier(keys: JWTKeyStore(JWTKeySet(configured: [key])))
            #expect(try verifier.verify(token, now: Self.now).subject == "u17", "\(path)")
        }
    }

    @Test(
        "with each algorithm: an expired token, one not valid yet, a tampered payload and another key's signature are refused"
    )
    func eachAlgorithmRefuses() throws {
        let keys = try JWTTestKeys.shared()
        let verifier = try Self.verifier(pem: ["rsa", "p256", "ed25519"])
        let others = ["rsa": "rsa2", "p256": "p256b", "ed25519": "ed25519"]
        for (alg, name) in Self.signers {
            let expired = try keys.token(
                ["sub": .string("u1"), "exp": .number(Double(Self.now - 3600))], alg: alg, key: name)
            #expect(throws: JWTError.expired) { try verifier.verify(expired, now: Self.now) }
            let early = try keys.token(
                [
                    "sub": .string("u1"), "nbf": .number(Double(Self.now + 3600)),
                    "exp": .number(Double(Self.now + 7200)),
                ],
                alg: alg, key: name)
            #expect(throws: JWTError.notYetValid) { try verifier.verify(early, now: Self.now) }
            let good = try keys.token(Self.claims, alg: alg, key: name).split(separator: ".")
            let tampered = [
                good[0],
                Substring(
                    Base64URL.encode(JSONWriter.write(.object(["sub": .string("admin"), "exp": Self.claims["exp"]!])))),
                good[2],
            ].joined(separator: ".")
            #expect(throws: JWTError.badSignature) { try verifier.verify(tampered, now: Self.now) }
            if name != "ed25519" {
                let foreign = try keys.token(Self.claims, alg: alg, key: others[name]!)
                #expect(throws: JWTError.badSignature, "\(alg)") { try verifier.verify(foreign, now: Self.now) }
            }
        }
    }

    // MARK: - Attacks

    @Test("algorithm confusion: an HS256 token whose HMAC key is the RSA public key's PEM is refused")
    func algorithmConfusion() throws {
        let keys = try JWTTestKeys.shared()
        let pem = [UInt8](try Data(contentsOf: URL(fileURLWithPath: keys.publicKey("rsa"))))
        let verifier = try Self.verifier(pem: ["rsa"], jwk: ["rsa"])
        let confused = try keys.token(
            Self.claims, header: ["alg": .string("HS256")], signingAs: .hs256, secret: pem)
        #expect(throws: JWTError.badSignature) { try verifier.verify(confused, now: Self.now) }
        // Naming the RSA key does not make its bytes an HMAC key either.
        let named = try keys.token(
            Self.claims, header: ["alg": .string("HS256"), "kid": .string("rsa")], signingAs: .hs256, secret: pem)
        #expect(throws: JWTError.keyForOtherAlgorithm(kid: "rsa", key: .rs256, token: .hs256)) {
            try verifier.verify(named, now: Self.now)
        }
        // And the JWK's own bytes (n) as a secret: the same.
        let modulus = Base64URL.decode(keys.jwks["rsa"]!["n"]!.stringValue!)!
        let withModulus = try keys.token(
            Self.claims, header: ["alg": .string("HS256")], signingAs: .hs256, secret: modulus)
        #expect(throws: JWTError.badSignature) { try verifier.verify(withModulus, now: Self.now) }
    }

    @Test("alg none (with or without a signature), HS512, RS512, PS256, ES384 and ES256K are refused as unsupported")
    func unsupportedAlgorithms() throws {
        let keys = try JWTTestKeys.shared()
        let verifier = try Self.verifier(pem: ["rsa", "p256"])
        let body = Base64URL.encode(JSONWriter.write(.object(Self.claims)))
        for alg in ["none", "None", "NONE", "HS512", "RS512", "PS256", "ES384", "ES256K", "Ed25519", ""] {
            let header = Base64URL.encode(JSONWriter.write(.object(["alg": .string(alg)])))
            #expect(throws: JWTError.unsupportedAlgorithm(alg)) {
                try verifier.verify(header + "." + body + ".", now: Self.now)
            }
            let signed =
                header + "." + body + "."
                + Base64URL.encode(try keys.signature(of: Array((header + "." + body).utf8), as: .rs256, with: "rsa"))
            #expect(throws: JWTError.unsupportedAlgorithm(alg)) { try verifier.verify(signed, now: Self.now) }
        }
        #expect(
            JWTError.unsupportedAlgorithm("HS512").description
                == "the token is signed with HS512; this hub accepts HS256, RS256, ES256 and EdDSA")
        // One of the hub's algorithms, without a key for it.
        let ed = try keys.token(Self.claims, alg: .edDSA, key: "ed25519")
        #expect(throws: JWTError.noKeyForAlgorithm(.edDSA)) { try verifier.verify(ed, now: Self.now) }
    }

    @Test("ES256: a DER signature is refused, and so are r = s = 0 (psychic signatures) and r, s = the group order")
    func ecdsaSignatureForms() throws {
        let keys = try JWTTestKeys.shared()
        let verifier = try Self.verifier(pem: ["p256"])
        let header = Base64URL.encode(JSONWriter.write(.object(["alg": .string("ES256")])))
        let input = header + "." + Base64URL.encode(JSONWriter.write(.object(Self.claims)))
        let der = try PEMPrivateKey(file: keys.privateKey("p256")).signSHA256(Array(input.utf8))
        #expect(
            throws: JWTError.malformed("an ES256 signature is the 64 bytes r‖s (RFC 7518 §3.4), not \(der.count) bytes")
        ) {
            try verifier.verify(input + "." + Base64URL.encode(der), now: Self.now)
        }
        let zeros = [UInt8](repeating: 0, count: 64)
        #expect(throws: JWTError.badSignature) {
            try verifier.verify(input + "." + Base64URL.encode(zeros), now: Self.now)
        }
        // n, the order of P-256: r = s = n is r = s = 0 modulo n.
        let order: [UInt8] = [
            0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
            0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
        ]
        #expect(throws: JWTError.badSignature) {
            try verifier.verify(input + "." + Base64URL.encode(order + order), now: Self.now)
        }
        // The good signature still verifies (the refusals are about the signatures, not the key).
        let raw = try JWSSigner.rawECDSA(fromDER: der)
        #expect(try verifier.verify(input + "." + Base64URL.encode(raw), now: Self.now).subject == "u17")
    }

    @Test("keys of the wrong size or curve are refused: RSA 1024, P-384, secp256k1 and Ed448 PEM files")
    func wrongKeys() throws {
        let keys = try JWTTestKeys.shared()
        let cases: [(String, String)] = [
            ("rsa1024", "an RSA key of 1024 bits"), ("p384", "an EC key on curve secp384r1"),
            ("k256", "an EC key on curve secp256k1"), ("ed448", "a key of OpenSSL type \(EVP_PKEY_ED448)"),
        ]
        for (name, found) in cases {
            #expect(throws: JWTKeyError.unsupported(source: keys.publicKey(name), found: found)) {
                try JWTKey(publicKeyFile: keys.publicKey(name))
            }
        }
        // A token signed ES256 with a secp256k1 key does not verify with the P-256 key.
        let k256 = try keys.token(Self.claims, alg: .es256, key: "k256")
        #expect(throws: JWTError.badSignature) { try Self.verifier(pem: ["p256"]).verify(k256, now: Self.now) }
    }

    @Test("a private key, garbage and a missing file are refused as --jwt-public-key, each saying so")
    func pemRefusals() throws {
        let keys = try JWTTestKeys.shared()
        #expect(throws: JWTKeyError.privateKey(source: keys.privateKey("rsa"))) {
            try JWTKey(publicKeyFile: keys.privateKey("rsa"))
        }
        #expect(throws: JWTKeyError.self) {
            try JWTKey(
                publicKeyPEM: Array("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n".utf8), source: "x")
        }
        do {
            _ = try JWTKey(publicKeyPEM: Array("hello".utf8), source: "hello.pem")
            Issue.record("garbage was read as a key")
        } catch {
            guard case .notAPublicKey(let source, _) = error else { throw error }
            #expect(source == "hello.pem")
        }
        #expect(throws: JWTKeyError.unreadable(path: keys.directory + "/none.pem", reason: "No such file or directory"))
        {
            try JWTKey(publicKeyFile: keys.directory + "/none.pem")
        }
    }

    @Test("kid injection: a path, a very long kid and control characters never reach a lookup, a log or a file")
    func kidInjection() throws {
        let keys = try JWTTestKeys.shared()
        let verifier = try Self.verifier(jwk: ["rsa"])
        // A path is only a name no key has.
        for kid in ["../../../../etc/passwd", "/dev/zero", "rsa/../rsa", "rsa ", "RSA"] {
            let token = try keys.token(Self.claims, alg: .rs256, key: "rsa", kid: kid)
            #expect(throws: JWTError.unknownKey(kid: kid)) { try verifier.verify(token, now: Self.now) }
        }
        let malformed = JWTError.malformed("the kid header is not a string of 1 to 128 visible ASCII characters")
        for kid: JSONValue in [
            .string(String(repeating: "k", count: 129)), .string("rsa\n"), .string("rsa\u{0}"), .string("ключ"),
            .string(""), .number(1), .array([.string("rsa")]), .null,
        ] {
            let token = try keys.token(
                Self.claims, header: ["alg": .string("RS256"), "kid": kid], signingAs: .rs256, with: "rsa")
            #expect(throws: malformed, "\(kid)") { try verifier.verify(token, now: Self.now) }
        }
        let longest = String(repeating: "k", count: 128)
        #expect(throws: JWTError.unknownKey(kid: longest)) {
            try verifier.verify(try keys.token(Self.claims, alg: .rs256, key: "rsa", kid: longest), now: Self.now)
        }
    }

    @Test(
        "a kid naming a key of another kind is refused: ES256 or EdDSA or HS256 naming the RSA key, RS256 naming the EC key"
    )
    func kidOfAnotherKind() throws {
        let keys = try JWTTestKeys.shared()
        let verifier = try Self.verifier(jwk: ["rsa", "p256", "ed25519"])
        let cases: [(JWTAlgorithm, String, String, JWTAlgorithm)] = [
            (.es256, "p256", "rsa", .rs256), (.edDSA, "ed25519", "rsa", .rs256), (.rs256, "rsa", "p256", .es256),
            (.es256, "p256", "ed25519", .edDSA),
        ]
        for (alg, signer, kid, keyAlgorithm) in cases {
            let token = try keys.token(Self.claims, alg: alg, key: signer, kid: kid)
            #expect(throws: JWTError.keyForOtherAlgorithm(kid: kid, key: keyAlgorithm, token: alg)) {
                try verifier.verify(token, now: Self.now)
            }
        }
        let hs256 = try keys.token(
            Self.claims, header: ["alg": .string("HS256"), "kid": .string("p256")], signingAs: .hs256,
            secret: Self.secret)
        #expect(throws: JWTError.keyForOtherAlgorithm(kid: "p256", key: .es256, token: .hs256)) {
            try verifier.verify(hs256, now: Self.now)
        }
        #expect(
            JWTError.keyForOtherAlgorithm(kid: "p256", key: .es256, token: .hs256).description
                == "the token is signed with HS256, but its kid \"p256\" names a key for ES256")
    }

    @Test("a token that brings its own key (jwk, jku, x5u, x5c headers) is verified with the hub's keys only")
    func embeddedKeysIgnored() throws {
        let keys = try JWTTestKeys.shared()
        let verifier = try Self.verifier(pem: ["rsa"], jwk: ["p256"])
        var attackerJWK = keys.jwks["rsa2"]!
        attackerJWK["kid"] = nil
        let header: JSONObject = [
            "alg": .string("RS256"), "jwk": .object(attackerJWK), "jku": .string("http://127.0.0.1:1/jwks.json"),
            "x5u": .string("http://127.0.0.1:1/cert.pem"), "x5c": .array([.string("MIIB")]),
        ]
        let token = try keys.token(Self.claims, header: header, signingAs: .rs256, with: "rsa2")
        #expect(throws: JWTError.badSignature) { try verifier.verify(token, now: Self.now) }
        var named = header
        named["kid"] = .string("attacker")
        let withKid = try keys.token(Self.claims, header: named, signingAs: .rs256, with: "rsa2")
        #expect(throws: JWTError.unknownKey(kid: "attacker")) { try verifier.verify(withKid, now: Self.now) }
        // The same headers on a token the hub's key signed change nothing.
        let honest = try keys.token(Self.claims, header: header, signingAs: .rs256, with: "rsa")
        #expect(try verifier.verify(honest, now: Self.now).subject == "u17")
    }

    @Test("the claims checks are the same for every algorithm: iss, aud, sub, cohorts, required exp")
    func claimsChecks() throws {
        let keys = try JWTTestKeys.shared()
        var verifier = try Self.verifier(pem: ["ed25519"])
        verifier.issuer = "https://idp.test/"
        verifier.audience = "hub"
        let good: JSONObject = [
            "sub": .string("u9"), "iss": .string("https://idp.test/"), "aud": .array([.string("api"), .string("hub")]),
            "exp": .number(Double(Self.now + 60)), "cohorts": .array([.string("beta")]),
        ]
        let claims = try verifier.verify(keys.token(good, alg: .edDSA, key: "ed25519"), now: Self.now)
        #expect(claims.subject == "u9" && claims.cohorts == ["beta"])
        func refused(_ change: (inout JSONObject) -> Void) throws -> String {
            var claims = good
            change(&claims)
            return try keys.token(claims, alg: .edDSA, key: "ed25519")
        }
        #expect(throws: JWTError.wrongIssuer) {
            try verifier.verify(try refused { $0["iss"] = .string("evil") }, now: Self.now)
        }
        #expect(throws: JWTError.wrongAudience) {
            try verifier.verify(try refused { $0["aud"] = .string("api") }, now: Self.now)
        }
        #expect(throws: JWTError.noSubject) { try verifier.verify(try refused { $0["sub"] = nil }, now: Self.now) }
        #expect(throws: JWTError.noExpiry) { try verifier.verify(try refused { $0["exp"] = nil }, now: Self.now) }
    }

    // MARK: - Another implementation

    @Test("PyJWT's RS256, ES256 and EdDSA tokens verify with the JWKs PyJWT wrote, and PyJWT verifies ours")
    func crossCheckWithPyJWT() throws {
        let keys = try JWTTestKeys.shared()
        var verifier = try Self.verifier(jwk: ["rsa", "p256", "ed25519"])
        verifier.audience = "hub"
        let now = Int(Date().timeIntervalSince1970)
        for alg in ["RS256", "ES256", "EdDSA"] {
            let token = try #require(keys.pyjwtTokens[alg])
            #expect(try verifier.verify(token, now: now).subject == "u-py", "\(alg)")
        }
        let ours = try Self.signers.map { alg, name in
            PyJWT.Check(
                token: try keys.token(Self.claims, alg: alg, key: name, kid: name), publicKey: keys.publicKey(name),
                algorithm: alg.rawValue)
        }
        for (result, check) in zip(try PyJWT.verify(ours), ours) {
            #expect(result["claims"]?["sub"] == .string("u17"), "\(check.algorithm): \(result)")
        }
    }
}
