/// Why a key for client tokens was not taken (DESIGN §18): from `--jwt-public-key FILE` (the hub
/// refuses to start) or from a JWKS (that key is left out, and a log line names its kid). Each
/// description names where the key came from and what is wrong; none contains key material.
public enum JWTKeyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be read.
    case unreadable(path: String, reason: String)
    /// Nothing OpenSSL reads as a public key or a certificate (`reason`: OpenSSL's, or ours).
    case notAPublicKey(source: String, reason: String)
    /// A private key where a public one belongs: a PEM private key given as a public key, or a
    /// JWK with `d` (its owner published the private key).
    case privateKey(source: String)
    /// A key of a kind the hub does not verify with: a curve other than P-256, an RSA key shorter
    /// than 2048 bits, a symmetric JWK.
    case unsupported(source: String, found: String)
    /// A JWK whose members do not make a key: missing or not base64url, a point off the curve.
    case invalid(source: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
        case .notAPublicKey(let source, let reason):
            "\(source) holds no PEM public key or certificate OpenSSL can read (\(reason))"
        case .privateKey(let source):
            "\(source) is a private key; the hub takes only public keys (openssl pkey -pubout prints one)"
        case .unsupported(let source, let found):
            "\(source) is \(found); the hub verifies RS256 with RSA keys of 2048 bits or more, ES256 with P-256 keys "
                + "and EdDSA with Ed25519 keys"
        case .invalid(let source, let reason): "\(source) is not a usable key: \(reason)"
        }
    }
}
