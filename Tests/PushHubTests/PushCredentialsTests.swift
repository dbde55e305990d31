import Foundation
import HTTP2
import Testing

@testable import PushHub

/// Keys made by the `openssl` CLI in a temporary directory, once per test run: what a team's
/// `.p8`, a service account's RSA key, and the keys the hub must refuse look like.
struct PushTestKeys: Sendable {
    let directory: String

    /// EC P-256 in PKCS#8, as Apple's `.p8` files are.
    var ecPKCS8: String { directory + "/AuthKey_ABC123DEFG.p8" }
    /// EC P-256 in the traditional `BEGIN EC PRIVATE KEY` form.
    var ecTraditional: String { directory + "/ec-traditional.pem" }
    var ecPublic: String { directory + "/ec-public.pem" }
    /// RSA 2048 in PKCS#8, as Google's service-account files hold it.
    var rsaPKCS8: String { directory + "/rsa.pem" }
    /// RSA 2048 in PKCS#1 (`BEGIN RSA PRIVATE KEY`).
    var rsaTraditional: String { directory + "/rsa-traditional.pem" }
    var rsaPublic: String { directory + "/rsa-public.pem" }
    var p384: String { directory + "/p384.pem" }
    var ed25519: String { directory + "/ed25519.pem" }
    var encrypted: String { directory + "/encrypted.p8" }

    private static let made = Result {
        try PushTestKeys(making: NSTemporaryDirectory() + "pushhub-keys-\(UUID().uuidString)")
    }
    static func shared() throws -> PushTestKeys { try made.get() }

    private init(making directory: String) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.openssl(
            "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", directory + "/ec-traditional.pem")
        try Self.openssl("pkcs8", "-topk8", "-nocrypt", "-in", ecTraditional, "-out", ecPKCS8)
        try Self.openssl("pkey", "-in", ecPKCS8, "-pubout", "-out", ecPublic)
        try Self.openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", rsaPKCS8)
        try Self.openssl("pkey", "-in", rsaPKCS8, "-traditional", "-out", rsaTraditional)
        try Self.openssl("pkey", "-in", rsaPKCS8, "-pubout", "-out", rsaPublic)
        try Self.openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:secp384r1", "-out", p384)
        try Self.openssl("genpkey", "-algorithm", "ed25519", "-out", ed25519)
        try Self.openssl(
            "pkcs8", "-topk8", "-in", ecTraditional, "-v2", "aes-256-cbc", "-passout", "pass:secret", "-out", encrypted)
    }

    private static func openssl(_ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SelfCheckFailure(
                description: "openssl \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
    }

    /// A service-account JSON as the Firebase console makes it, with `private_key` from `keyPath`.
    func serviceAccount(
        keyPath: String? = nil, tokenURI: String = "https://oauth2.googleapis.com/token",
        omitting omitted: String? = nil
    ) throws -> [UInt8] {
        let key = try String(contentsOfFile: keyPath ?? rsaPKCS8, encoding: .utf8)
        var fields: JSONObject = [
            "type": .string("service_account"), "project_id": .string("pushhub-test"),
            "private_key_id": .string("0123abcd"), "private_key": .string(key),
            "client_email": .string("hub@pushhub-test.iam.gserviceaccount.com"), "client_id": .string("1234567890"),
            "token_uri": .string(tokenURI),
        ]
        if let omitted { fields[omitted] = nil }
        return JSONWriter.write(.object(fields))
    }
}

struct SelfCheckFailure: Error, CustomStringConvertible {
    var description: String
}

/// Verifies JWS with another implementation: PyJWT with `cryptography` in the repo's venv, given
/// the public key `openssl pkey -pubout` wrote. Each token gives `{"header","claims"}` or
/// `{"error"}` (PyJWT's refusal).
enum PyJWT {
    struct Check {
        var token: String
        var publicKey: String
        var algorithm: String
        var audience: String?
    }

    static let script = """
        import json, sys, jwt
        results = []
        for check in json.load(sys.stdin):
            try:
                key = open(check["key"]).read()
                claims = jwt.decode(check["token"], key, algorithms=[check["alg"]], audience=check.get("aud"),
                                    options={"verify_aud": "aud" in check, "verify_iat": False, "verify_exp": False})
                results.append({"header": jwt.get_unverified_header(check["token"]), "claims": claims})
            except Exception as error:
                results.append({"error": type(error).__name__ + ": " + str(error)})
        print(json.dumps(results))
        """

    static func verify(_ checks: [Check]) throws -> [JSONValue] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let process = Process()
        process.executableURL = root.appending(path: ".venv/bin/python")
        process.arguments = ["-c", script]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let request: [JSONValue] = checks.map { check in
            var object: JSONObject = [
                "token": .string(check.token), "key": .string(check.publicKey), "alg": .string(check.algorithm),
            ]
            if let audience = check.audience { object["aud"] = .string(audience) }
            return .object(object)
        }
        input.fileHandleForWriting.write(Data(JSONWriter.write(.array(request))))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let results = try JSONReader.parse([UInt8](data)).arrayValue,
            results.count == checks.count
        else {
            throw SelfCheckFailure(
                description: "PyJWT check exited \(process.terminationStatus): \(String(decoding: data, as: UTF8.self))"
            )
        }
        return results
    }
}

@Suite("push credentials: PEM keys, JWS, APNs provider tokens, FCM service accounts and access tokens")
struct PushCredentialsTests {
    // MARK: PEMPrivateKey

    @Test("EC P-256 and RSA keys load from PKCS#8 and from the traditional PEM forms")
    func loadsEveryForm() throws {
        let keys = try PushTestKeys.shared()
        #expect(try PEMPrivateKey(file: keys.ecPKCS8).kind == .ecP256)
        #expect(try PEMPrivateKey(file: keys.ecTraditional).kind == .ecP256)
        #expect(try PEMPrivateKey(file: keys.rsaPKCS8).kind == .rsa(bits: 2048))
        #expect(try PEMPrivateKey(file: keys.rsaTraditional).kind == .rsa(bits: 2048))
    }

    @Test("keys the providers cannot use are refused, naming the file and what it holds")
    func refusesOtherKeys() throws {
        let keys = try PushTestKeys.shared()
        #expect(
            throws: PushCredentialError.wrongKeyKind(
                source: keys.p384, found: "an EC key on curve secp384r1",
                expected: "an EC P-256 key (prime256v1) or an RSA key")
        ) { try PEMPrivateKey(file: keys.p384) }
        #expect {
            try PEMPrivateKey(file: keys.ed25519)
        } throws: { error in
            guard case .wrongKeyKind(let source, _, _) = error as? PushCredentialError else { return false }
            return source == keys.ed25519
        }
        #expect(throws: PushCredentialError.encryptedKey(source: keys.encrypted)) {
            try PEMPrivateKey(file: keys.encrypted)
        }
        // A public key is not a private key.
        #expect {
            try PEMPrivateKey(file: keys.ecPublic)
        } throws: { error in
            guard case .notAPrivateKey(let source, let reason) = error as? PushCredentialError else { return false }
            return source == keys.ecPublic && !reason.isEmpty
        }
    }

    @Test("missing files, directories and text that is not PEM are clear errors")
    func refusesWhatIsNotAKeyFile() throws {
        let keys = try PushTestKeys.shared()
        let missing = keys.directory + "/missing.p8"
        #expect(throws: PushCredentialError.unreadable(path: missing, reason: "No such file or directory")) {
            try PEMPrivateKey(file: missing)
        }
        #expect(throws: PushCredentialError.unreadable(path: keys.directory, reason: "not a regular file")) {
            try PEMPrivateKey(file: keys.directory)
        }
        #expect {
            try PEMPrivateKey(pem: Array("hello".utf8), source: "inline")
        } throws: { error in
            guard case .notAPrivateKey("inline", _) = error as? PushCredentialError else { return false }
            return true
        }
        // A truncated key: the first half of a real one.
        let pem = try [UInt8](Data(contentsOf: URL(fileURLWithPath: keys.ecPKCS8)))
        #expect(throws: PushCredentialError.self) {
            try PEMPrivateKey(pem: Array(pem.prefix(pem.count / 2)), source: "half")
        }
    }

    @Test("no error message carries key material")
    func errorsDoNotPrintKeys() throws {
        let keys = try PushTestKeys.shared()
        let pem = try String(contentsOfFile: keys.ecPKCS8, encoding: .utf8)
        // Corrupt the base64 inside the block so that OpenSSL's own reason is in the message.
        let lines = pem.split(separator: "\n")
        let broken = ([lines[0], "!!" + lines[1].dropFirst(2)] + lines.dropFirst(2)).joined(separator: "\n")
        do {
            _ = try PEMPrivateKey(pem: Array(broken.utf8), source: "broken.p8")
            Issue.record("a corrupted key loaded")
        } catch {
            let body = lines[1...].filter { !$0.hasPrefix("-----") }
            for line in body { #expect(!error.description.contains(line.dropFirst(4).prefix(16))) }
            #expect(error.description.hasPrefix("broken.p8 holds no PEM private key"))
        }
    }

    // MARK: JWSSigner

    @Test("a signer refuses a key of the other algorithm")
    func signerChecksKeyKind() throws {
        let keys = try PushTestKeys.shared()
        let rsa = try PEMPrivateKey(file: keys.rsaPKCS8)
        let ec = try PEMPrivateKey(file: keys.ecPKCS8)
        #expect(
            throws: PushCredentialError.wrongKeyKind(
                source: keys.rsaPKCS8, found: "an RSA 2048-bit key", expected: "an EC P-256 key (ES256)")
        ) {
            try JWSSigner(key: rsa, algorithm: .es256)
        }
        #expect(
            throws: PushCredentialError.wrongKeyKind(
                source: keys.ecPKCS8, found: "an EC P-256 key", expected: "an RSA key (RS256)")
        ) {
            try JWSSigner(key: ec, algorithm: .rs256)
        }
    }

    @Test("ECDSA DER becomes r‖s of 32 bytes each: short values are left-padded, DER's sign byte dropped")
    func derToRaw() throws {
        let r = [UInt8](repeating: 0xA1, count: 32)  // high bit set: DER prefixes 0x00
        let s = [UInt8](repeating: 0x00, count: 2) + [UInt8](repeating: 0x07, count: 30)  // DER keeps 30 bytes
        let der: [UInt8] =
            [0x30, 2 + 33 + 2 + 30]  // SEQUENCE, length
            + [0x02, 33, 0x00] + r  // INTEGER r with its sign byte
            + [0x02, 30] + s.dropFirst(2)  // INTEGER s, minimal
        #expect(try JWSSigner.rawECDSA(fromDER: der) == r + s)
        #expect(throws: PushCredentialError.self) { try JWSSigner.rawECDSA(fromDER: Array(der.dropLast())) }
        #expect(throws: PushCredentialError.self) { try JWSSigner.rawECDSA(fromDER: der + [0]) }
        // A 33-byte value that does not fit 32 bytes.
        let tooLong: [UInt8] = [0x30, 2 + 33 + 2 + 1, 0x02, 33, 0x01] + r + [0x02, 1, 0x01]
        #expect(throws: PushCredentialError.self) { try JWSSigner.rawECDSA(fromDER: tooLong) }
    }

    @Test("ES256 and RS256 tokens verify with PyJWT and the public key; a changed byte does not")
    func tokensVerifyElsewhere() throws {
        let keys = try PushTestKeys.shared()
        let es256 = try JWSSigner(key: PEMPrivateKey(file: keys.ecPKCS8), algorithm: .es256)
        let rs256 = try JWSSigner(key: PEMPrivateKey(file: keys.rsaTraditional), algorithm: .rs256)
        let claims: JSONObject = ["sub": .string("x"), "n": .number(1), "text": .string("é\"\n")]
        let ecToken = try es256.sign(header: ["kid": .string("K")], claims: claims)
        let rsaToken = try rs256.sign(claims: claims)
        // ES256 signatures are raw r‖s: 64 bytes, 86 base64url characters.
        #expect(Base64URL.decode(ecToken.split(separator: ".")[2])?.count == 64)
        #expect(Base64URL.decode(rsaToken.split(separator: ".")[2])?.count == 256)
        var tampered = Array(ecToken.utf8)
        tampered[tampered.count - 5] =
            tampered[tampered.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let results = try PyJWT.verify([
            .init(token: ecToken, publicKey: keys.ecPublic, algorithm: "ES256"),
            .init(token: rsaToken, publicKey: keys.rsaPublic, algorithm: "RS256"),
            .init(token: String(decoding: tampered, as: UTF8.self), publicKey: keys.ecPublic, algorithm: "ES256"),
            .init(token: ecToken, publicKey: keys.rsaPublic, algorithm: "RS256"),
        ])
        #expect(results[0]["header"] == (try JSONReader.parse(#"{"alg":"ES256","kid":"K"}"#)))
        #expect(results[0]["claims"] == .object(claims))
        #expect(results[1]["header"] == (try JSONReader.parse(#"{"alg":"RS256"}"#)))
        #expect(results[1]["claims"] == .object(claims))
        #expect(results[2]["error"]?.stringValue?.hasPrefix("InvalidSignatureError") == true)
        #expect(results[3]["error"] != nil)
    }

    // MARK: APNsProviderToken

    @Test("the provider token is {alg ES256, kid} {iss team, iat} and verifies with the .p8's public key")
    func providerTokenVerifies() throws {
        let keys = try PushTestKeys.shared()
        var provider = try APNsProviderToken(
            key: PEMPrivateKey(file: keys.ecPKCS8), keyID: "ABC123DEFG", teamID: "TEAM123456")
        let token = try provider.token(nowSeconds: 1_700_000_000)
        let result = try PyJWT.verify([.init(token: token, publicKey: keys.ecPublic, algorithm: "ES256")])[0]
        #expect(result["header"] == (try JSONReader.parse(#"{"alg":"ES256","kid":"ABC123DEFG"}"#)))
        #expect(result["claims"] == (try JSONReader.parse(#"{"iss":"TEAM123456","iat":1700000000}"#)))
    }

    @Test("the provider token is kept for 40 minutes, then renewed; a clock that went back renews it")
    func providerTokenRenewal() throws {
        let keys = try PushTestKeys.shared()
        var provider = try APNsProviderToken(key: PEMPrivateKey(file: keys.ecPKCS8), keyID: "K", teamID: "T")
        let start = 1_700_000_000
        let first = try provider.token(nowSeconds: start)
        #expect(try provider.token(nowSeconds: start + 40 * 60 - 1) == first)
        #expect(provider.current?.issuedAt == start)
        let second = try provider.token(nowSeconds: start + 40 * 60)
        #expect(second != first)
        #expect(provider.current?.issuedAt == start + 40 * 60)
        let third = try provider.token(nowSeconds: start)  // the clock went back
        #expect(third != second)
        #expect(provider.current?.issuedAt == start)
    }

    @Test("ExpiredProviderToken renews the token it names, once, however many pushes carried it")
    func providerTokenExpiredOnDemand() throws {
        let keys = try PushTestKeys.shared()
        var provider = try APNsProviderToken(key: PEMPrivateKey(file: keys.ecPKCS8), keyID: "K", teamID: "T")
        let first = try provider.token(nowSeconds: 1000)
        provider.expired(first)
        let second = try provider.token(nowSeconds: 1001)
        #expect(second != first)
        provider.expired(first)  // a later refusal of the old token: the new one stays
        #expect(try provider.token(nowSeconds: 1002) == second)
        #expect(provider.current?.issuedAt == 1001)
    }

    @Test("an APNs provider token needs an EC P-256 key")
    func providerTokenNeedsEC() throws {
        let keys = try PushTestKeys.shared()
        #expect(throws: PushCredentialError.self) {
            try APNsProviderToken(key: PEMPrivateKey(file: keys.rsaPKCS8), keyID: "K", teamID: "T")
        }
    }

    // MARK: FCMServiceAccount

    @Test("a service-account JSON gives the project, the email and the token endpoint's parts")
    func parsesServiceAccount() throws {
        let keys = try PushTestKeys.shared()
        let account = try FCMServiceAccount(
            json: keys.serviceAccount(tokenURI: "https://127.0.0.1:8443/token"), source: "sa.json")
        #expect(account.projectID == "pushhub-test")
        #expect(account.clientEmail == "hub@pushhub-test.iam.gserviceaccount.com")
        #expect(account.tokenURI == "https://127.0.0.1:8443/token")
        #expect(account.privateKeyID == "0123abcd")
        #expect(
            (account.tokenScheme, account.tokenAuthority, account.tokenPath) == ("https", "127.0.0.1:8443", "/token"))
        let path = keys.directory + "/service-account.json"
        try Data(keys.serviceAccount()).write(to: URL(fileURLWithPath: path))
        let fromFile = try FCMServiceAccount(file: path)
        #expect(
            (fromFile.tokenScheme, fromFile.tokenAuthority, fromFile.tokenPath) == (
                "https", "oauth2.googleapis.com", "/token"
            ))
    }

    @Test(
        "each missing field of a service account is named",
        arguments: ["project_id", "private_key", "client_email", "token_uri"])
    func namesMissingField(_ field: String) throws {
        let keys = try PushTestKeys.shared()
        #expect(
            throws: PushCredentialError.badServiceAccount(
                source: "sa.json", reason: "it has no \(field) (a non-empty string)")
        ) {
            try FCMServiceAccount(json: keys.serviceAccount(omitting: field), source: "sa.json")
        }
    }

    @Test("a service account that is not JSON, of another type, with a bad token_uri or an EC key is refused")
    func refusesBadServiceAccounts() throws {
        let keys = try PushTestKeys.shared()
        #expect(throws: PushCredentialError.badServiceAccount(source: "sa.json", reason: "it is not a JSON object")) {
            try FCMServiceAccount(json: Array("[1]".utf8), source: "sa.json")
        }
        var other = try JSONReader.parse(keys.serviceAccount()).objectValue!
        other["type"] = .string("authorized_user")
        #expect(
            throws: PushCredentialError.badServiceAccount(
                source: "sa.json", reason: #"its type is "authorized_user", not "service_account""#)
        ) {
            try FCMServiceAccount(json: JSONWriter.write(.object(other)), source: "sa.json")
        }
        for uri in [
            "oauth2.googleapis.com/token", "ftp://x/token", "https:///token", "https://user@host/token",
            "https://host/a b",
        ] {
            #expect(
                throws: PushCredentialError.badServiceAccount(
                    source: "sa.json", reason: "its token_uri \(uri) is not an https:// URL with a host")
            ) {
                try FCMServiceAccount(json: keys.serviceAccount(tokenURI: uri), source: "sa.json")
            }
        }
        #expect(
            throws: PushCredentialError.wrongKeyKind(
                source: "sa.json (private_key)", found: "an EC P-256 key", expected: "an RSA key (RS256)")
        ) {
            try FCMServiceAccount(json: keys.serviceAccount(keyPath: keys.ecPKCS8), source: "sa.json")
        }
    }

    @Test("the RS256 assertion verifies with PyJWT: iss, scope, aud = token_uri, exp = iat + 3600, kid")
    func assertionVerifies() throws {
        let keys = try PushTestKeys.shared()
        let account = try FCMServiceAccount(
            json: keys.serviceAccount(tokenURI: "https://127.0.0.1:9/token"), source: "sa.json")
        let assertion = try account.assertion(nowSeconds: 1_700_000_000)
        let results = try PyJWT.verify([
            .init(
                token: assertion, publicKey: keys.rsaPublic, algorithm: "RS256", audience: "https://127.0.0.1:9/token"),
            .init(
                token: assertion, publicKey: keys.rsaPublic, algorithm: "RS256",
                audience: "https://oauth2.googleapis.com/token"),
        ])
        #expect(results[0]["header"] == (try JSONReader.parse(#"{"alg":"RS256","kid":"0123abcd","typ":"JWT"}"#)))
        #expect(
            results[0]["claims"]
                == (try JSONReader.parse(
                    #"{"iss":"hub@pushhub-test.iam.gserviceaccount.com","scope":"https://www.googleapis.com/auth/firebase.messaging","aud":"https://127.0.0.1:9/token","iat":1700000000,"exp":1700003600}"#
                )))
        #expect(results[1]["error"]?.stringValue?.hasPrefix("InvalidAudienceError") == true)
    }

    @Test("the token request is a form POST to token_uri with the jwt-bearer grant and the assertion")
    func tokenRequest() throws {
        let keys = try PushTestKeys.shared()
        let account = try FCMServiceAccount(
            json: keys.serviceAccount(tokenURI: "https://127.0.0.1:9/oauth/token?x=1"), source: "sa.json")
        let request = try account.tokenRequest(nowSeconds: 1_700_000_000)
        #expect(request.method == "POST")
        #expect((request.scheme, request.authority, request.path) == ("https", "127.0.0.1:9", "/oauth/token?x=1"))
        #expect(request.headers == [HeaderField("content-type", "application/x-www-form-urlencoded")])
        let body = String(decoding: request.body, as: UTF8.self)
        let prefix = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="
        #expect(body.hasPrefix(prefix))
        let assertion = String(body.dropFirst(prefix.count))
        let result = try PyJWT.verify([
            .init(
                token: assertion, publicKey: keys.rsaPublic, algorithm: "RS256",
                audience: "https://127.0.0.1:9/oauth/token?x=1")
        ])[0]
        #expect(result["claims"]?["iat"] == .number(1_700_000_000))
    }

    // MARK: FCMAccessToken

    @Test("the token answer gives a token usable until 60 s before it expires")
    func accessTokenCaching() throws {
        let body = Array(#"{"access_token":"ya29.abc","expires_in":3599,"token_type":"Bearer"}"#.utf8)
        let token = try FCMAccessToken(status: 200, body: body, nowSeconds: 1000)
        #expect(token == FCMAccessToken(value: "ya29.abc", expiresAtSeconds: 4599))
        #expect(token.isUsable(nowSeconds: 1000))
        #expect(token.isUsable(nowSeconds: 4599 - 61))
        #expect(!token.isUsable(nowSeconds: 4599 - 60))
        #expect(!token.isUsable(nowSeconds: 5000))
    }

    @Test(
        "token answers that are refusals or not tokens are errors saying why, transient for 429 and 5xx",
        arguments: [
            (
                400, #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#,
                "invalid_grant: Invalid JWT Signature.", false
            ),
            (401, #"{"error":"invalid_client"}"#, "invalid_client", false),
            (503, "Service Unavailable", "no OAuth error in the answer", true),
            (429, "{}", "no OAuth error in the answer", true),
            (200, "not json", "the answer is not a JSON object", false),
            (200, #"{"expires_in":3600,"token_type":"Bearer"}"#, "the answer has no usable access_token", false),
            (
                200, #"{"access_token":"a b","expires_in":3600,"token_type":"Bearer"}"#,
                "the answer has no usable access_token", false
            ),
            (200, #"{"access_token":"t","expires_in":3600,"token_type":"mac"}"#, "the token_type is not Bearer", false),
            (
                200, #"{"access_token":"t","expires_in":0,"token_type":"Bearer"}"#,
                "expires_in is not a positive number of seconds", false
            ),
            (
                200, #"{"access_token":"t","expires_in":"3600","token_type":"Bearer"}"#,
                "expires_in is not a positive number of seconds", false
            ),
        ])
    func accessTokenRefusals(_ status: Int, _ body: String, _ reason: String, _ transient: Bool) throws {
        do {
            _ = try FCMAccessToken(status: status, body: Array(body.utf8), nowSeconds: 0)
            Issue.record("accepted \(body)")
        } catch {
            #expect(error == .tokenRefused(status: status, reason: reason))
            #expect(error.isTransient == transient)
        }
    }
}
