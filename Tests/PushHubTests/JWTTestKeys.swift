import COpenSSL
import Foundation

@testable import PushHub

/// Keys for the public-key token tests, made once per test run in a temporary directory: by the
/// `openssl` CLI (private and public PEM, an `RSA PUBLIC KEY`, a certificate), with their public
/// JWKs and a few tokens made by PyJWT with `cryptography` (another implementation, in the
/// repo's venv) — what an identity provider publishes and signs.
struct JWTTestKeys: Sendable {
    /// rsa and rsa2: RSA 2048; rsa1024; p256 and p256b; p384; k256 (secp256k1); ed25519; ed448.
    static let names = ["rsa", "rsa2", "rsa1024", "p256", "p256b", "p384", "k256", "ed25519", "ed448"]

    let directory: String
    /// Each key's public JWK as PyJWT writes it, with `kid` = its name.
    let jwks: [String: JSONObject]
    /// Tokens PyJWT signed (`sub` "u-py", `aud` "hub", an hour of life at the run's start): "RS256"
    /// with rsa, "ES256" with p256, "EdDSA" with ed25519, each with its key's name as kid.
    let pyjwtTokens: [String: String]

    func privateKey(_ name: String) -> String { directory + "/\(name).pem" }
    func publicKey(_ name: String) -> String { directory + "/\(name).pub.pem" }
    var rsaPKCS1: String { directory + "/rsa.pkcs1.pem" }
    var rsaCertificate: String { directory + "/rsa.crt" }

    private static let made = Result {
        try JWTTestKeys(making: NSTemporaryDirectory() + "pushhub-jwt-keys-\(UUID().uuidString)")
    }
    static func shared() throws -> JWTTestKeys { try made.get() }

    private init(making directory: String) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let generate: [String: [String]] = [
            "rsa": ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
            "rsa2": ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
            "rsa1024": ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"],
            "p256": ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
            "p256b": ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
            "p384": ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"],
            "k256": ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:secp256k1"],
            "ed25519": ["-algorithm", "ed25519"],
            "ed448": ["-algorithm", "ed448"],
        ]
        for name in Self.names {
            try Self.run("/usr/bin/openssl", ["genpkey"] + generate[name]! + ["-out", directory + "/\(name).pem"])
            try Self.run(
                "/usr/bin/openssl",
                ["pkey", "-in", directory + "/\(name).pem", "-pubout", "-out", directory + "/\(name).pub.pem"])
        }
        try Self.run(
            "/usr/bin/openssl",
            ["rsa", "-in", directory + "/rsa.pem", "-RSAPublicKey_out", "-out", directory + "/rsa.pkcs1.pem"])
        try Self.run(
            "/usr/bin/openssl",
            [
                "req", "-new", "-x509", "-key", directory + "/rsa.pem", "-subj", "/CN=idp.test", "-days", "2", "-out",
                directory + "/rsa.crt",
            ])
        let script = """
            import json, sys, time, jwt
            from cryptography.hazmat.primitives.serialization import load_pem_private_key
            from jwt.algorithms import RSAAlgorithm, ECAlgorithm, OKPAlgorithm
            from jwt.utils import base64url_encode
            directory, names = sys.argv[1], sys.argv[2:]
            keys = {name: load_pem_private_key(open(f"{directory}/{name}.pem", "rb").read(), None) for name in names}
            jwks = {}
            for name, key in keys.items():
                writer = RSAAlgorithm if name.startswith("rsa") else OKPAlgorithm if name.startswith("ed") else ECAlgorithm
                jwk = writer.to_jwk(key.public_key(), as_dict=True)
                if writer is ECAlgorithm:
                    # PyJWT drops leading zero bytes of x and y (its own reader then refuses the
                    # key); RFC 7518 §6.2.1.2 wants the coordinate's full size, as providers write it.
                    numbers, size = key.public_key().public_numbers(), (key.curve.key_size + 7) // 8
                    jwk["x"] = base64url_encode(numbers.x.to_bytes(size, "big")).decode()
                    jwk["y"] = base64url_encode(numbers.y.to_bytes(size, "big")).decode()
                jwk["kid"] = name
                jwks[name] = jwk
            claims = {"sub": "u-py", "aud": "hub", "exp": int(time.time()) + 3600}
            tokens = {alg: jwt.encode(claims, keys[name], algorithm=alg, headers={"kid": name})
                      for alg, name in [("RS256", "rsa"), ("ES256", "p256"), ("EdDSA", "ed25519")]}
            print(json.dumps({"jwks": jwks, "tokens": tokens}))
            """
        let output = try Self.run(Self.python, ["-c", script, directory] + Self.names)
        let made = try JSONReader.parse(output)
        jwks = (made["jwks"]?.objectValue ?? [:]).reduce(into: [:]) { $0[$1.key] = $1.value.objectValue }
        pyjwtTokens = (made["tokens"]?.objectValue ?? [:]).reduce(into: [:]) { $0[$1.key] = $1.value.stringValue }
    }

    static var python: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: ".venv/bin/python").path
    }

    /// Runs `tool` and returns what it printed; throws when it fails.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SelfCheckFailure(description: "\(tool) \(arguments.prefix(3)) exited \(process.terminationStatus)")
        }
        return [UInt8](data)
    }

    // MARK: - Minting tokens

    /// A token over `header` and `claims` (both as given: `alg` too, so a test can lie), signed
    /// as `algorithm` says with the private key `name` (HS256: with `secret`).
    func token(
        _ claims: JSONObject, header: JSONObject, signingAs algorithm: JWTAlgorithm, with name: String = "",
        secret: [UInt8] = []
    ) throws -> String {
        let input =
            Base64URL.encode(JSONWriter.write(.object(header))) + "."
            + Base64URL.encode(JSONWriter.write(.object(claims)))
        return input + "."
            + Base64URL.encode(try signature(of: Array(input.utf8), as: algorithm, with: name, secret: secret))
    }

    /// A token with `alg` (and `kid` when given) in its header, signed by key `name` as `alg` says.
    func token(_ claims: JSONObject, alg: JWTAlgorithm, key name: String, kid: String? = nil) throws -> String {
        var header: JSONObject = ["alg": .string(alg.rawValue), "typ": .string("JWT")]
        if let kid { header["kid"] = .string(kid) }
        return try token(claims, header: header, signingAs: alg, with: name)
    }

    /// A JWS signature of `input`: r‖s for ES256 (from OpenSSL's DER), PKCS#1 v1.5 for RS256,
    /// Ed25519's for EdDSA, an HMAC for HS256 — with whatever key `name` is (a test may sign
    /// ES256 with a key of another curve).
    func signature(of input: [UInt8], as algorithm: JWTAlgorithm, with name: String, secret: [UInt8] = []) throws
        -> [UInt8]
    {
        switch algorithm {
        case .hs256: return JWTVerifier.hmacSHA256(key: secret, data: input)
        case .rs256: return try Self.sign(input, keyPath: privateKey(name), sha256: true)
        case .es256: return try JWSSigner.rawECDSA(fromDER: Self.sign(input, keyPath: privateKey(name), sha256: true))
        case .edDSA: return try Self.sign(input, keyPath: privateKey(name), sha256: false)
        }
    }

    /// Signs through OpenSSL with SHA-256 (RSA, ECDSA in DER) or the key's own scheme (Ed25519).
    private static func sign(_ input: [UInt8], keyPath: String, sha256: Bool) throws -> [UInt8] {
        let pem = [UInt8](try Data(contentsOf: URL(fileURLWithPath: keyPath)))
        guard let key = pem.withUnsafeBytes({ pushhub_read_private_key($0.baseAddress, Int32($0.count)) }) else {
            throw SelfCheckFailure(description: "\(keyPath) is not a private key")
        }
        defer { EVP_PKEY_free(key) }
        let context = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(context) }
        var signature = [UInt8](repeating: 0, count: 1024)
        var length = signature.count
        guard EVP_DigestSignInit(context, nil, sha256 ? EVP_sha256() : nil, nil, key) == 1,
            EVP_DigestSign(context, &signature, &length, input, input.count) == 1
        else { throw SelfCheckFailure(description: "signing with \(keyPath) failed") }
        return Array(signature[..<length])
    }
}
