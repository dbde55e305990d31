import HTTP1
import Testing

@testable import PushHub

/// `--jwt-public-key FILE` (repeatable) and `--jwt-jwks URL` (DESIGN §18): keys read when the
/// options are parsed, URLs checked, every refusal naming the flag.
@Suite("JWT key options: --jwt-public-key (repeatable, env and file lists) and --jwt-jwks (https, or http to loopback)")
struct JWTOptionsTests {
    @Test("--jwt-public-key is repeatable; its env variable and config key take a comma-separated list")
    func publicKeys() throws {
        let keys = try JWTTestKeys.shared()
        let (rsa, p256, ed) = (keys.publicKey("rsa"), keys.publicKey("p256"), keys.publicKey("ed25519"))
        let flags = try HubOptions.parse(["--jwt-public-key", rsa, "--jwt-public-key=\(p256)"], environment: [:])
        #expect(flags.config.jwtPublicKeys.map(\.source) == [rsa, p256])
        #expect(flags.config.jwtPublicKeys.map(\.algorithm) == [.rs256, .es256])
        let environment = ["PUSHHUB_JWT_PUBLIC_KEY": "\(rsa), \(ed)"]
        #expect(try HubOptions.parse([], environment: environment).config.jwtPublicKeys.map(\.source) == [rsa, ed])
        // Flags replace the environment's list (flags > env), then add to each other.
        let both = try HubOptions.parse(["--jwt-public-key", p256, "--jwt-public-key", ed], environment: environment)
        #expect(both.config.jwtPublicKeys.map(\.source) == [p256, ed])
        #expect(try HubOptions.parse([], environment: [:]).config.jwtPublicKeys.isEmpty)
    }

    @Test("a key file the hub cannot use is a usage error naming the flag and the file")
    func publicKeyRefusals() throws {
        let keys = try JWTTestKeys.shared()
        for (path, says) in [
            (keys.privateKey("rsa"), "is a private key"), (keys.publicKey("p384"), "an EC key on curve secp384r1"),
            (keys.publicKey("rsa1024"), "an RSA key of 1024 bits"), (keys.directory + "/none.pem", "cannot read"),
        ] {
            #expect {
                try HubOptions.parse(["--jwt-public-key", path], environment: [:])
            } throws: { error in
                "\(error)".hasPrefix("--jwt-public-key: ") && "\(error)".contains(path) && "\(error)".contains(says)
            }
        }
    }

    @Test("--jwt-jwks takes https URLs, and http only to a loopback host")
    func jwks() throws {
        let https = try HubOptions.parse(
            ["--jwt-jwks", "https://tenant.auth0.com/.well-known/jwks.json"], environment: [:])
        #expect(https.config.jwtJWKS?.origin == HTTPOrigin(isTLS: true, host: "tenant.auth0.com", port: 443))
        #expect(https.config.jwtJWKS?.target == "/.well-known/jwks.json")
        for loopback in ["http://127.0.0.1:8999/jwks.json", "http://localhost/jwks", "http://[::1]:80/k"] {
            #expect(
                try HubOptions.parse(["--jwt-jwks", loopback], environment: [:]).config.jwtJWKS != nil, "\(loopback)")
        }
        #expect(try HubOptions.parse([], environment: ["PUSHHUB_JWT_JWKS": "https://a.test/k"]).config.jwtJWKS != nil)
        for refused in ["http://idp.example/jwks.json", "ftp://idp.example/jwks", "https://", "jwks.json"] {
            #expect(throws: HubOptions.UsageError.self, "\(refused)") {
                try HubOptions.parse(["--jwt-jwks", refused], environment: [:])
            }
        }
        #expect {
            try HubOptions.parse(["--jwt-jwks", "http://10.0.0.1/jwks.json"], environment: [:])
        } throws: { error in
            "\(error)"
                == "--jwt-jwks wants an https:// URL (http:// only to a loopback host, for tests), not 'http://10.0.0.1/jwks.json'"
        }
    }
}
