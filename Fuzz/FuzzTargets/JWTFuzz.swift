import COpenSSL
import PushHub

/// The JWT verifier on any token text, with a fixed secret.
///
/// Input: a settings byte (bit 0: require `iss` "hub"; bit 1: require `aud` "clients"; bit 2:
/// first re-sign the token's header and payload with the secret, so the checks after the
/// signature are reached; bit 3: require `exp`), then the token text.
///
/// Properties of an accepted token:
/// - its signature is HMAC-SHA256(secret, header.payload) computed by OpenSSL's own `HMAC()`
///   (not the verifier's code): no token is accepted that the secret did not sign;
/// - its header says `alg` HS256 and has no `crit`; it is not expired (and has an `exp` when
///   one is required) and is valid already (with the leeway); `sub` is a non-empty string; issuer and audience are the required ones;
///   the cohorts are the `cohorts` claim's strings.
/// A re-signed token is never refused for its signature.
enum JWTFuzz {
    static let secret = Array("pushhub fuzz secret, 32 bytes ok".utf8)
    /// 2023-11-14T22:13:20Z: tokens in the corpus expire before or after it.
    static let now = 1_700_000_000

    static func run(_ data: UnsafeRawBufferPointer) throws(PropertyViolation) {
        var input = FuzzInput(data)
        let settings = input.byte()
        var verifier = JWTVerifier(secret: secret)
        if settings & 1 != 0 { verifier.issuer = "hub" }
        if settings & 2 != 0 { verifier.audience = "clients" }
        verifier.requireExpiry = settings & 8 != 0
        var token = String(decoding: input.rest(), as: UTF8.self)
        let resigned = settings & 4 != 0
        if resigned, let dot = token.utf8.lastIndex(of: UInt8(ascii: ".")) {
            let signingInput = Array(token.utf8[..<dot])
            token = String(decoding: signingInput, as: UTF8.self) + "." + Base64URL.encode(hmac(signingInput))
        }
        let claims: JWTVerifier.Claims
        do {
            claims = try verifier.verify(token, now: now)
        } catch {
            try check(!(resigned && error == .badSignature), "re-signed \(token) refused: \(error)")
            return
        }
        try checkAccepted(token, claims, verifier)
    }

    static func checkAccepted(_ token: String, _ claims: JWTVerifier.Claims, _ verifier: JWTVerifier)
        throws(PropertyViolation)
    {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        try check(parts.count == 3, "accepted \(token) has \(parts.count) parts")
        let signingInput = Array(token.utf8[..<parts[2].startIndex].dropLast())
        try check(
            Base64URL.decode(parts[2]) == hmac(signingInput),
            "accepted \(token) whose signature the secret did not make")
        let header = Base64URL.decode(parts[0]).flatMap { try? JSONReader.parse($0) }
        try check(
            header?["alg"] == .string("HS256") && header?["crit"] == nil,
            "accepted \(token) with header \(String(describing: header))")
        let all = claims.all
        if let exp = all["exp"]?.numberValue {
            try check(Double(now) < exp + Double(verifier.leewaySeconds), "accepted \(token) expired at \(exp)")
        } else {
            try check(!verifier.requireExpiry, "accepted \(token) without exp")
        }
        if let nbf = all["nbf"]?.numberValue {
            try check(Double(now + verifier.leewaySeconds) >= nbf, "accepted \(token) not valid before \(nbf)")
        }
        try check(
            !claims.subject.isEmpty && all["sub"] == .string(claims.subject),
            "accepted \(token) with sub \(claims.subject)")
        if let issuer = verifier.issuer {
            try check(all["iss"] == .string(issuer), "accepted \(token) from another issuer")
        }
        if let audience = verifier.audience {
            let aud = all["aud"]
            try check(
                aud == .string(audience) || aud?.arrayValue?.contains(.string(audience)) == true,
                "accepted \(token) for another audience")
        }
        try check(
            claims.cohorts == (all["cohorts"]?.arrayValue ?? []).compactMap(\.stringValue),
            "accepted \(token) with cohorts \(claims.cohorts)")
    }

    /// HMAC-SHA256 by OpenSSL's one-shot `HMAC()`, independent of the verifier's own.
    static func hmac(_ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = HMAC(EVP_sha256(), secret, Int32(secret.count), data, data.count, &out, &length)
        return Array(out[..<Int(length)])
    }
}
