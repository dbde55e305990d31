/// The keys client tokens are verified with at one moment (DESIGN §18): the HS256 secret, the
/// `--jwt-public-key` files (no kid), and the keys of the JWKS (`--jwt-jwks`), each admitting one
/// algorithm.
///
/// Invariant (the algorithm is the key's): `candidates` returns only keys whose `algorithm` is
/// the token's `alg`; a kid that names a key of another algorithm is a refusal, never a reason to
/// use that key's bytes another way.
public struct JWTKeySet: Sendable {
    /// Longest kid the hub reads; a kid is compared, never used as a path or a URL.
    static let maximumKeyIDBytes = 128

    /// The keys that stay while the hub runs (the HS256 secret, the PEM files).
    public private(set) var configured: [JWTKey]
    /// The keys of the last good JWKS answer (empty before the first, or without a JWKS).
    public private(set) var published: [JWTKey]

    public init(configured: [JWTKey], published: [JWTKey] = []) {
        self.configured = configured
        self.published = published
    }

    /// The same set with `keys` as the JWKS's keys.
    func publishing(_ keys: [JWTKey]) -> JWTKeySet { JWTKeySet(configured: configured, published: keys) }

    /// Which keys may have signed a token with `algorithm` and, when it names one, `kid`.
    enum Candidates {
        /// Try these, in order: the keys with that kid, or, for a token without kid or with one
        /// no key has, the keys of that algorithm the hub has without a kid (PEM files, the
        /// secret) — and, for a token without kid, every key of that algorithm.
        case keys([JWTKey], kidIsKnown: Bool)
        /// A key has that kid, but it is for another algorithm.
        case otherAlgorithm(JWTKey)
    }

    func candidates(for algorithm: JWTAlgorithm, kid: String?) -> Candidates {
        let all = configured + published
        guard let kid else { return .keys(all.filter { $0.algorithm == algorithm }, kidIsKnown: false) }
        let named = all.filter { $0.kid == kid }
        if !named.isEmpty {
            let usable = named.filter { $0.algorithm == algorithm }
            return usable.isEmpty ? .otherAlgorithm(named[0]) : .keys(usable, kidIsKnown: true)
        }
        return .keys(all.filter { $0.kid == nil && $0.algorithm == algorithm }, kidIsKnown: false)
    }

    /// The algorithms some key verifies, in `JWTAlgorithm` order.
    var algorithms: [JWTAlgorithm] {
        let all = configured + published
        return JWTAlgorithm.allCases.filter { algorithm in all.contains { $0.algorithm == algorithm } }
    }

    /// A kid the hub reads: 1 to `maximumKeyIDBytes` bytes of visible ASCII or spaces. Anything
    /// else (control characters, a very long string) is refused before it reaches a log line or
    /// an error message.
    static func isAcceptableKeyID(_ kid: String) -> Bool {
        let bytes = kid.utf8
        return (1...maximumKeyIDBytes).contains(bytes.count) && bytes.allSatisfy { (0x20...0x7E).contains($0) }
    }
}
