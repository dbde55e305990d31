import COpenSSL

/// Signs compact JWS (RFC 7515 §7.1) with a private key: ES256 (ECDSA P-256 with SHA-256, the
/// APNs provider token) or RS256 (RSASSA-PKCS1-v1_5 with SHA-256, the Google OAuth assertion).
///
/// Invariants: `key` is of the kind `algorithm` needs (checked by `init`); every token it makes
/// is `base64url(header) "." base64url(claims) "." base64url(signature)` with `alg` in the
/// header, and an ES256 signature is the 64 bytes r‖s (RFC 7518 §3.4), not OpenSSL's DER.
public struct JWSSigner: Sendable {
    public enum Algorithm: String, Equatable, Sendable {
        case es256 = "ES256"
        case rs256 = "RS256"
    }

    public let algorithm: Algorithm
    public let key: PEMPrivateKey

    /// - Throws: `.wrongKeyKind` when `key` cannot make `algorithm`'s signatures.
    public init(key: PEMPrivateKey, algorithm: Algorithm) throws(PushCredentialError) {
        switch (algorithm, key.kind) {
        case (.es256, .ecP256), (.rs256, .rsa): break
        case (.es256, .rsa):
            throw .wrongKeyKind(source: key.source, found: key.kind.description, expected: "an EC P-256 key (ES256)")
        case (.rs256, .ecP256):
            throw .wrongKeyKind(source: key.source, found: key.kind.description, expected: "an RSA key (RS256)")
        }
        self.key = key
        self.algorithm = algorithm
    }

    /// A signed token: `header` gains `"alg"` (any `alg` given is replaced); both are written as
    /// canonical JSON (JSONWriter).
    public func sign(header: JSONObject = [:], claims: JSONObject) throws(PushCredentialError) -> String {
        var header = header
        header["alg"] = .string(algorithm.rawValue)
        let signingInput =
            Base64URL.encode(JSONWriter.write(.object(header))) + "."
            + Base64URL.encode(JSONWriter.write(.object(claims)))
        let signature = try key.signSHA256(Array(signingInput.utf8))
        switch algorithm {
        case .rs256: return signingInput + "." + Base64URL.encode(signature)
        case .es256: return signingInput + "." + Base64URL.encode(try Self.rawECDSA(fromDER: signature))
        }
    }

    /// An ECDSA P-256 signature in DER as JWS's r‖s: each a 32-byte big-endian integer.
    static func rawECDSA(fromDER der: [UInt8]) throws(PushCredentialError) -> [UInt8] {
        var raw = [UInt8](repeating: 0, count: 64)
        let converted = der.withUnsafeBufferPointer { pushhub_ecdsa_der_to_raw($0.baseAddress, $0.count, &raw, 32) }
        guard converted == 1 else {
            throw .signingFailed(reason: "OpenSSL's ECDSA signature is not DER of two 32-byte integers")
        }
        return raw
    }
}
