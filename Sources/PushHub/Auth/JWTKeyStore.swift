/// The key set every client loop verifies tokens with (DESIGN §18), shared by the loops and the
/// control plane's JWKS fetcher, which swaps in the keys of each good answer.
///
/// Invariants: `keys` is always a whole set (a swap replaces it at once, never key by key); the
/// configured keys (the HS256 secret, the PEM files) never change; the published ones change only
/// by `publish`, never to an empty list.
public final class JWTKeyStore: Sendable {
    /// Taken once per hello that carries a token (to read) and once per good JWKS answer (to
    /// swap): a moment each, never while verifying (docs/architecture.md).
    private let current: PthreadMutex<JWTKeySet>  // guarded by itself
    /// A JWKS is configured: a token naming a kid no key has may wait for a fetch (the hello is
    /// parked) instead of being refused at once.
    public let fetchesKeys: Bool
    /// Where refusals and fetches are counted (the hub's `Metrics.jwt`).
    let metrics: JWTMetrics

    public init(_ keys: JWTKeySet, fetchesKeys: Bool = false, metrics: JWTMetrics = JWTMetrics()) {
        current = PthreadMutex(keys)
        self.fetchesKeys = fetchesKeys
        self.metrics = metrics
    }

    /// The HS256 secret alone (`hubctl`, tests, a hub without public keys).
    public convenience init(secret: [UInt8]) {
        self.init(JWTKeySet(configured: [JWTKey(secret: secret)]))
    }

    /// The set as it is now.
    public var keys: JWTKeySet { current.withLock { $0 } }

    /// Makes `keys` (not empty) the published keys, replacing the previous ones at once.
    func publish(_ keys: [JWTKey]) {
        precondition(!keys.isEmpty, "a bad JWKS answer never empties the key set")
        current.withLock { $0 = $0.publishing(keys) }
    }
}
