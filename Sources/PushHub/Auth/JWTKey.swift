import COpenSSL

/// One key client tokens are verified with (DESIGN §18): the hub's HS256 secret, or a public key
/// (RSA, EC P-256, Ed25519) from a PEM file or a JWKS, with its `kid` when it has one.
///
/// Invariants: `algorithm` is the only algorithm the key verifies, and follows from `kind`
/// alone (HMAC → HS256, RSA → RS256, P-256 → ES256, Ed25519 → EdDSA), so an HS256 token is never
/// checked against public-key bytes; a public key is a loaded OpenSSL key of `kind`, owned by
/// this object, freed with it and never changed after `init`, and so is its verification context,
/// which is only ever copied — which is why instances may be shared by every loop (OpenSSL 3
/// verifies with one key from several threads at once).
public final class JWTKey: @unchecked Sendable, CustomStringConvertible {
    /// What kind of key it is.
    public enum Kind: Equatable, Sendable, CustomStringConvertible {
        case hmac
        case rsa(bits: Int)
        case ecP256
        case ed25519

        public var description: String {
            switch self {
            case .hmac: "the HS256 secret"
            case .rsa(let bits): "an RSA \(bits)-bit key"
            case .ecP256: "an EC P-256 key"
            case .ed25519: "an Ed25519 key"
            }
        }
    }

    /// RSA keys shorter than this are refused (RFC 7518 §3.3: 2048 bits or larger).
    public static let minimumRSABits = 2048

    public let kid: String?
    public let kind: Kind
    public let algorithm: JWTAlgorithm
    /// Where the key came from ("jwt.secret", a path, "the JWKS at https://…"), for logs.
    public let source: String
    private let secret: [UInt8]
    private let publicKey: OpaquePointer?
    /// An `EVP_MD_CTX` set up to verify with `publicKey`, copied for each signature.
    private let verifier: OpaquePointer?

    /// The HS256 key: `secret`'s bytes.
    public init(secret: [UInt8], source: String = "jwt.secret") {
        kid = nil
        kind = .hmac
        algorithm = .hs256
        self.source = source
        self.secret = secret
        publicKey = nil
        verifier = nil
    }

    /// Takes ownership of `loaded`, an OpenSSL public key, once it is of a kind the hub verifies
    /// with (it is freed otherwise).
    /// - Throws: `.unsupported` naming what it is (another curve, a short RSA key, another type).
    init(taking loaded: OpaquePointer, kid: String?, source: String) throws(JWTKeyError) {
        let type = pushhub_key_type(loaded)
        var kind: Kind?
        var found = "a key of OpenSSL type \(type)"
        if type == pushhub_key_type_rsa() {
            let bits = Int(pushhub_key_bits(loaded))
            found = "an RSA key of \(bits) bits"
            if bits >= Self.minimumRSABits { kind = .rsa(bits: bits) }
        } else if type == pushhub_key_type_ec() {
            let curve = String(cString: pushhub_key_curve(loaded))
            found = "an EC key on curve \(curve.isEmpty ? "(unnamed)" : curve)"
            if curve == "prime256v1" { kind = .ecP256 }
        } else if type == pushhub_key_type_ed25519() {
            kind = .ed25519
        }
        guard let kind else {
            EVP_PKEY_free(loaded)
            throw .unsupported(source: source, found: found)
        }
        guard let verifier = pushhub_verifier_new(loaded, kind == .ed25519 ? 0 : 1) else {
            EVP_PKEY_free(loaded)
            throw .invalid(source: source, reason: "OpenSSL cannot verify signatures with it")
        }
        self.verifier = verifier
        self.kid = kid
        self.kind = kind
        self.source = source
        secret = []
        publicKey = loaded
        algorithm =
            switch kind {
            case .hmac: .hs256
            case .rsa: .rs256
            case .ecP256: .es256
            case .ed25519: .edDSA
            }
    }

    deinit {
        if let verifier { EVP_MD_CTX_free(verifier) }
        if let publicKey { EVP_PKEY_free(publicKey) }
    }

    public var description: String {
        "\(kind) for \(algorithm)" + (kid.map { " (kid \"\($0)\")" } ?? "") + " from \(source)"
    }

    /// Whether `signature` is this key's over `input` (a token's `header.payload`) under the
    /// key's algorithm. An ES256 signature must be the 64 bytes r‖s; DER is not JWS (RFC 7518
    /// §3.4) and is refused.
    func verifies(_ signature: [UInt8], of input: [UInt8]) -> Bool {
        switch kind {
        case .hmac:
            return JWTVerifier.constantTimeEquals(signature, JWTVerifier.hmacSHA256(key: secret, data: input))
        case .rsa, .ed25519:
            return verifiesWithOpenSSL(signature, of: input)
        case .ecP256:
            guard signature.count == 64 else { return false }
            var der = [UInt8](repeating: 0, count: 72)
            let length = signature.withUnsafeBufferPointer { pushhub_ecdsa_raw_to_der($0.baseAddress, 32, &der) }
            guard length > 0 else { return false }
            return verifiesWithOpenSSL(Array(der[..<Int(length)]), of: input)
        }
    }

    private func verifiesWithOpenSSL(_ signature: [UInt8], of input: [UInt8]) -> Bool {
        guard let verifier else { return false }
        return input.withUnsafeBufferPointer { data in
            signature.withUnsafeBufferPointer { signed in
                pushhub_verify(verifier, data.baseAddress, data.count, signed.baseAddress, signed.count) == 1
            }
        }
    }
}
