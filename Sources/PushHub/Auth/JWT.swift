import COpenSSL

/// Why a client token was refused; `description` is the sentence sent in the `error` message.
public enum JWTError: Error, Equatable, Sendable, CustomStringConvertible {
    case malformed(String)
    /// An `alg` the hub never verifies (`none`, HS512, PS256, …).
    case unsupportedAlgorithm(String)
    /// One of the hub's algorithms, but it has no key for it.
    case noKeyForAlgorithm(JWTAlgorithm)
    /// The token's `kid` names no key the hub has (a JWKS may not have been fetched since the
    /// provider published it), and no key without a kid verifies it.
    case unknownKey(kid: String)
    /// The token's `kid` names a key for another algorithm than its `alg`.
    case keyForOtherAlgorithm(kid: String, key: JWTAlgorithm, token: JWTAlgorithm)
    case badSignature
    case expired
    case notYetValid
    case wrongIssuer
    case wrongAudience
    case noSubject
    case noExpiry

    public var description: String {
        switch self {
        case .malformed(let why): "the token is malformed: \(why)"
        case .unsupportedAlgorithm(let alg):
            "the token is signed with \(alg); this hub accepts \(JWTAlgorithm.list(JWTAlgorithm.allCases))"
        case .noKeyForAlgorithm(let alg): "the token is signed with \(alg), and this hub has no \(alg) key"
        case .unknownKey(let kid): "no key with kid \"\(kid)\" is known to this hub"
        case .keyForOtherAlgorithm(let kid, let key, let token):
            "the token is signed with \(token), but its kid \"\(kid)\" names a key for \(key)"
        case .badSignature: "the token's signature does not verify"
        case .expired: "the token has expired"
        case .notYetValid: "the token is not valid yet (nbf)"
        case .wrongIssuer: "the token's issuer is not the one this hub accepts"
        case .wrongAudience: "the token's audience does not include this hub"
        case .noSubject: "the token has no string sub (user id)"
        case .noExpiry: "the token has no exp claim; this hub accepts only tokens that expire"
        }
    }
}

/// Verifies client tokens (RFC 7519): JWS compact form (RFC 7515) signed HS256 with the hub's
/// secret, or RS256, ES256 or EdDSA with a public key (DESIGN §18) — `alg: none` and every other
/// algorithm are refused; `exp` and `nbf` checked with a leeway, and required when
/// `requireExpiry` (a token without `exp` would be valid forever); `iss`/`aud` when configured.
/// The header's `jku`, `x5u`, `jwk` and `x5c` are never read: a token cannot bring its own key.
///
/// Invariant: `verify` returns claims only for a token whose signature one of `keys`' keys
/// verified, and only a key whose algorithm is the token's `alg` (`JWTKeySet.candidates`); an
/// HMAC is compared in constant time.
public struct JWTVerifier: Sendable {
    /// What a verified token says: `sub`, the `cohorts` claim, and every claim (for cohort rules).
    public struct Claims: Equatable, Sendable {
        public var subject: String
        public var cohorts: [String]
        public var all: JSONObject
    }

    /// The keys, read once per token (the JWKS fetcher swaps them).
    public let keys: JWTKeyStore
    public var issuer: String?
    public var audience: String?
    /// Refuse tokens without `exp` (the hub's default outside `--dev`).
    public var requireExpiry: Bool
    /// Clock skew tolerated on `exp` and `nbf`.
    public var leewaySeconds: Int = 30

    public init(keys: JWTKeyStore, issuer: String? = nil, audience: String? = nil, requireExpiry: Bool = false) {
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
        self.requireExpiry = requireExpiry
    }

    /// A verifier with the HS256 secret as its only key.
    public init(secret: [UInt8], issuer: String? = nil, audience: String? = nil, requireExpiry: Bool = false) {
        self.init(keys: JWTKeyStore(secret: secret), issuer: issuer, audience: audience, requireExpiry: requireExpiry)
    }

    /// - Parameter now: seconds since the Unix epoch.
    public func verify(_ token: String, now: Int) throws(JWTError) -> Claims {
        // The token's bytes, cut at its two dots (a String split character by character cost as
        // much as an RSA verification: bench/README.md "Token verification").
        let bytes = Array(token.utf8)
        let dot = UInt8(ascii: ".")
        guard let firstDot = bytes.firstIndex(of: dot), let secondDot = bytes[(firstDot + 1)...].firstIndex(of: dot),
            !bytes[(secondDot + 1)...].contains(dot)
        else { throw .malformed("expected three dot-separated parts") }
        let parts = [bytes[..<firstDot], bytes[(firstDot + 1)..<secondDot], bytes[(secondDot + 1)...]]
        // A header that is not JSON is a malformed token (the reader's own error adds nothing here).
        guard let headerBytes = Base64URL.decode(bytes: parts[0]), let header = try? JSONReader.parse(headerBytes)
        else {
            throw .malformed("the header is not base64url JSON")
        }
        guard let alg = header["alg"]?.stringValue else { throw .malformed("the header has no alg") }
        guard let algorithm = JWTAlgorithm(rawValue: alg) else { throw .unsupportedAlgorithm(alg) }
        // RFC 7515 §4.1.11: this verifier understands no extension, so any `crit` is refused.
        if let critical = header["crit"] {
            throw .malformed("it marks extensions critical (crit: \(JSONWriter.string(critical)))")
        }
        var kid: String?
        if let named = header["kid"] {
            guard let text = named.stringValue, JWTKeySet.isAcceptableKeyID(text) else {
                throw .malformed(
                    "the kid header is not a string of 1 to \(JWTKeySet.maximumKeyIDBytes) visible ASCII characters")
            }
            kid = text
        }
        guard let signature = Base64URL.decode(bytes: parts[2]) else {
            throw .malformed("the signature is not base64url")
        }
        if algorithm == .es256 && signature.count != 64 {
            throw .malformed("an ES256 signature is the 64 bytes r‖s (RFC 7518 §3.4), not \(signature.count) bytes")
        }
        let signingInput = Array(bytes[..<secondDot])
        try checkSignature(signature, of: signingInput, algorithm: algorithm, kid: kid)
        // As for the header: a payload that is not a JSON object is malformed, whatever the reason.
        guard let payloadBytes = Base64URL.decode(bytes: parts[1]),
            case .object(let claims)? = try? JSONReader.parse(payloadBytes)
        else {
            throw .malformed("the payload is not a base64url JSON object")
        }
        return try checkClaims(claims, now: now)
    }

    /// Finds a key of `algorithm` (with `kid`, when it names one) that verifies `signature`.
    private func checkSignature(_ signature: [UInt8], of input: [UInt8], algorithm: JWTAlgorithm, kid: String?)
        throws(JWTError)
    {
        let set = keys.keys
        switch set.candidates(for: algorithm, kid: kid) {
        case .otherAlgorithm(let key):
            throw .keyForOtherAlgorithm(kid: kid ?? "", key: key.algorithm, token: algorithm)
        case .keys(let candidates, let kidIsKnown):
            if candidates.contains(where: { $0.verifies(signature, of: input) }) { return }
            if let kid, !kidIsKnown, algorithm != .hs256 { throw .unknownKey(kid: kid) }
            if candidates.isEmpty { throw .noKeyForAlgorithm(algorithm) }
            throw .badSignature
        }
    }

    /// The registered claims (RFC 7519 §4.1) the hub checks, then `sub` and `cohorts`.
    private func checkClaims(_ claims: JSONObject, now: Int) throws(JWTError) -> Claims {
        if let exp = claims["exp"] {
            guard let seconds = exp.numberValue else { throw .malformed("exp is not a number") }
            if Double(now) >= seconds + Double(leewaySeconds) { throw .expired }
        } else if requireExpiry {
            throw .noExpiry
        }
        if let nbf = claims["nbf"] {
            guard let seconds = nbf.numberValue else { throw .malformed("nbf is not a number") }
            if Double(now) + Double(leewaySeconds) < seconds { throw .notYetValid }
        }
        if let issuer, claims["iss"]?.stringValue != issuer { throw .wrongIssuer }
        if let audience {
            let audiences: [String] =
                claims["aud"]?.stringValue.map { [$0] } ?? claims["aud"]?.arrayValue?.compactMap(\.stringValue) ?? []
            guard audiences.contains(audience) else { throw .wrongAudience }
        }
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty else { throw .noSubject }
        // A `cohorts` claim the hub cannot read would silently leave the user out of them: refused.
        var cohorts: [String] = []
        if let value = claims["cohorts"] {
            guard let list = value.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
                throw .malformed("the cohorts claim is not an array of cohort names")
            }
            cohorts = list.compactMap(\.stringValue)
        }
        return Claims(subject: subject, cohorts: cohorts, all: claims)
    }

    /// Mints an HS256 token (for `hubctl token` and tests).
    public static func sign(_ claims: JSONObject, secret: [UInt8]) -> String {
        let header = Base64URL.encode(JSONWriter.write(.object(["alg": .string("HS256"), "typ": .string("JWT")])))
        let payload = Base64URL.encode(JSONWriter.write(.object(claims)))
        let signingInput = header + "." + payload
        return signingInput + "." + Base64URL.encode(hmacSHA256(key: secret, data: Array(signingInput.utf8)))
    }

    /// HMAC-SHA256 (RFC 2104): SHA-256((K ⊕ opad) ‖ SHA-256((K ⊕ ipad) ‖ data)) through `Digest`
    /// — OpenSSL 3's one-shot `HMAC()` fetches the algorithm under a process-wide lock on every
    /// call (every signed-in hello).
    static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        let blockSize = 64
        var block = key.count > blockSize ? Digest.sha256(key) : key
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        let inner = Digest.sha256(block.map { $0 ^ 0x36 } + data)
        return Digest.sha256(block.map { $0 ^ 0x5C } + inner)
    }

    /// Compares without an early exit, so timing does not reveal how much of a secret matched
    /// (signatures here, the admin token in `AdminAPI`).
    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<a.count { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}

/// Base64url without padding (RFC 4648 §5), as JWS uses it: `Base64.url`, by the name the JWT
/// code reads best with.
public enum Base64URL {
    public static func encode(_ bytes: [UInt8]) -> String { Base64.url.encode(bytes) }
    public static func decode(_ text: some StringProtocol) -> [UInt8]? { Base64.url.decode(text) }
    public static func decode(bytes text: ArraySlice<UInt8>) -> [UInt8]? { Base64.url.decode(bytes: text) }
}
