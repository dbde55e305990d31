import Testing

@testable import PushHub

@Suite struct JWTTests {
    // RFC 7515 Appendix A.1: the HS256 example; the JWK "k" is the key, base64url.
    static let key = Base64URL.decode(
        "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow")!
    static let token =
        "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        + ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

    @Test("the RFC 7515 A.1 example verifies (and has no sub, which we require)")
    func rfcExample() {
        let verifier = JWTVerifier(secret: Self.key, issuer: "joe")
        #expect(throws: JWTError.noSubject) { try verifier.verify(Self.token, now: 1_300_819_370) }
        #expect(throws: JWTError.expired) { try verifier.verify(Self.token, now: 1_300_819_380 + 31) }
        var tampered = Self.token
        tampered.removeLast()
        tampered += "j"
        #expect(throws: JWTError.badSignature) { try verifier.verify(tampered, now: 1_300_819_370) }
        #expect(throws: JWTError.wrongIssuer) {
            try JWTVerifier(secret: Self.key, issuer: "ann").verify(Self.token, now: 1_300_819_370)
        }
    }

    @Test("tokens we sign verify; other algorithms and alg none do not")
    func signAndRefuse() throws {
        let secret = Array("s3cret".utf8)
        let signed = JWTVerifier.sign(
            ["sub": .string("u17"), "cohorts": .array([.string("beta")]), "exp": .number(2_000_000_000)], secret: secret
        )
        let claims = try JWTVerifier(secret: secret).verify(signed, now: 1_900_000_000)
        #expect(claims.subject == "u17" && claims.cohorts == ["beta"])
        let none =
            Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(Array(#"{"sub":"u1"}"#.utf8))
            + "."
        #expect(throws: JWTError.unsupportedAlgorithm("none")) { try JWTVerifier(secret: secret).verify(none, now: 0) }
        #expect(throws: JWTError.self) { try JWTVerifier(secret: secret).verify("a.b", now: 0) }
    }

    @Test("base64url round-trips every length")
    func base64url() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
        #expect(Base64URL.decode("a") == nil && Base64URL.decode("ab+c") == nil)
    }

    @Test("version ranges combine comparators")
    func ranges() throws {
        let range = try #require(VersionRange(">=5.0.0 <6.0.0"))
        #expect(
            range.contains(SemanticVersion("5.3.1")!) && !range.contains(SemanticVersion("6.0.0")!)
                && !range.contains(SemanticVersion("4.9")!))
        #expect(VersionRange("<5.3.0")!.contains(SemanticVersion("5.2.9")!))
        #expect(VersionRange("5.x") == nil && VersionRange("") == nil)
    }

    @Test("HMAC-SHA256 matches RFC 4231 (test cases 1, 2 and 6: short key, short data, a key longer than a block)")
    func hmacVectors() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(
            hex(JWTVerifier.hmacSHA256(key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8)))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            hex(JWTVerifier.hmacSHA256(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            hex(
                JWTVerifier.hmacSHA256(
                    key: [UInt8](repeating: 0xaa, count: 131),
                    data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test("a crit header (RFC 7515 §4.1.11) and a cohorts claim that is not a list of names are refused")
    func critAndCohorts() throws {
        let secret = Array("s3cret".utf8)
        let verifier = JWTVerifier(secret: secret)
        func token(header: JSONObject, claims: JSONObject) -> String {
            let input = Base64URL.encode(JSONWriter.write(.object(header))) + "." + Base64URL.encode(JSONWriter.write(.object(claims)))
            return input + "." + Base64URL.encode(JWTVerifier.hmacSHA256(key: secret, data: Array(input.utf8)))
        }
        let critical = token(
            header: ["alg": .string("HS256"), "crit": .array([.string("exp-ext")]), "exp-ext": .bool(true)],
            claims: ["sub": .string("u1")])
        #expect(throws: JWTError.self) { try verifier.verify(critical, now: 0) }
        let badCohorts = token(header: ["alg": .string("HS256")], claims: ["sub": .string("u1"), "cohorts": .string("beta")])
        #expect(throws: JWTError.self) { try verifier.verify(badCohorts, now: 0) }
        let good = token(
            header: ["alg": .string("HS256")], claims: ["sub": .string("u1"), "cohorts": .array([.string("beta")])])
        #expect(try verifier.verify(good, now: 0).cohorts == ["beta"])
    }

    @Test("a token without exp is refused when expiry is required, accepted otherwise")
    func requiredExpiry() throws {
        let secret = Array("s3cret".utf8)
        let forever = JWTVerifier.sign(["sub": .string("u1")], secret: secret)
        let expiring = JWTVerifier.sign(["sub": .string("u1"), "exp": .number(1000)], secret: secret)
        #expect(try JWTVerifier(secret: secret).verify(forever, now: 0).subject == "u1")
        #expect(throws: JWTError.noExpiry) { try JWTVerifier(secret: secret, requireExpiry: true).verify(forever, now: 0) }
        #expect(try JWTVerifier(secret: secret, requireExpiry: true).verify(expiring, now: 0).subject == "u1")
    }
}
