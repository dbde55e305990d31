/// The JWS algorithms (RFC 7518 §3.1, RFC 8037 §3.1) the hub verifies client tokens with. Each
/// key admits exactly one of them (`JWTKey.algorithm`): a token's `alg` only selects among the
/// keys of that algorithm, it never decides how a key's bytes are used.
public enum JWTAlgorithm: String, CaseIterable, Equatable, Sendable, CustomStringConvertible {
    /// HMAC with SHA-256, with the hub's shared secret (`jwt.secret`).
    case hs256 = "HS256"
    /// RSASSA-PKCS1-v1_5 with SHA-256; RSA keys of at least 2048 bits.
    case rs256 = "RS256"
    /// ECDSA on P-256 with SHA-256; the signature is the 64 bytes r‖s (RFC 7518 §3.4).
    case es256 = "ES256"
    /// EdDSA with Ed25519 (RFC 8037).
    case edDSA = "EdDSA"

    public var description: String { rawValue }

    /// Every algorithm, as a sentence lists them: "HS256, RS256, ES256 and EdDSA".
    static func list(_ algorithms: [JWTAlgorithm]) -> String {
        let names = algorithms.map(\.rawValue)
        guard names.count > 1 else { return names.first ?? "none" }
        return names.dropLast().joined(separator: ", ") + " and " + names.last!
    }
}
