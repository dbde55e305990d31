import Synchronization

/// The client-token counters `/metrics` exports (DESIGN §18): JWKS fetches by outcome, the JWKS
/// keys in use, and refused tokens by reason. Fetches are counted by the control plane's thread,
/// refusals by every client loop (a relaxed atomic add per refused token, none per accepted one).
public final class JWTMetrics: Sendable {
    /// How a JWKS fetch ended.
    enum FetchOutcome: String, CaseIterable, Sendable {
        /// A usable key set, now in use.
        case ok
        /// 304: the keys in use are still the provider's.
        case notModified = "not_modified"
        /// No answer, a status other than 200/304, or an answer without a usable key (the keys
        /// in use stay).
        case failed
    }

    /// Why a token was refused, as a label.
    enum RefusalReason: String, CaseIterable, Sendable {
        case malformed, algorithm, unknownKid = "unknown_kid", signature, expired
        case notYetValid = "not_yet_valid", issuer, audience, subject, noExpiry = "no_expiry"

        init(_ error: JWTError) {
            switch error {
            case .malformed: self = .malformed
            case .unsupportedAlgorithm, .noKeyForAlgorithm, .keyForOtherAlgorithm: self = .algorithm
            case .unknownKey: self = .unknownKid
            case .badSignature: self = .signature
            case .expired: self = .expired
            case .notYetValid: self = .notYetValid
            case .wrongIssuer: self = .issuer
            case .wrongAudience: self = .audience
            case .noSubject: self = .subject
            case .noExpiry: self = .noExpiry
            }
        }
    }

    /// One figure (atomics cannot be array elements).
    private final class Figure: Sendable {
        let value = Atomic<Int>(0)
    }

    private let fetches = FetchOutcome.allCases.map { _ in Figure() }
    private let refusals = RefusalReason.allCases.map { _ in Figure() }
    /// The JWKS keys in use; -1 without a JWKS (not exported then).
    private let publishedKeys = Atomic<Int>(-1)

    public init() {}

    func count(_ outcome: FetchOutcome) {
        fetches[FetchOutcome.allCases.firstIndex(of: outcome)!].value.add(1, ordering: .relaxed)
    }

    func fetches(_ outcome: FetchOutcome) -> Int {
        fetches[FetchOutcome.allCases.firstIndex(of: outcome)!].value.load(ordering: .relaxed)
    }

    func countRefusal(_ error: JWTError) {
        refusals[RefusalReason.allCases.firstIndex(of: RefusalReason(error))!].value.add(1, ordering: .relaxed)
    }

    func refusals(_ reason: RefusalReason) -> Int {
        refusals[RefusalReason.allCases.firstIndex(of: reason)!].value.load(ordering: .relaxed)
    }

    func setPublishedKeys(_ count: Int) { publishedKeys.store(count, ordering: .relaxed) }

    /// The Prometheus text: refusals always; the JWKS families' series when a JWKS is configured
    /// (their HELP and TYPE lines always, as for the other families without series).
    var exposition: String {
        var text = "# HELP pushhub_jwt_refused_total Client tokens refused, by reason.\n"
        text += "# TYPE pushhub_jwt_refused_total counter\n"
        for (reason, figure) in zip(RefusalReason.allCases, refusals) {
            text +=
                "pushhub_jwt_refused_total{reason=\"\(reason.rawValue)\"} \(figure.value.load(ordering: .relaxed))\n"
        }
        let keys = publishedKeys.load(ordering: .relaxed)
        text +=
            "# HELP pushhub_jwks_fetches_total JWKS fetches, by outcome.\n# TYPE pushhub_jwks_fetches_total counter\n"
        if keys >= 0 {
            for (outcome, figure) in zip(FetchOutcome.allCases, fetches) {
                text +=
                    "pushhub_jwks_fetches_total{outcome=\"\(outcome.rawValue)\"} \(figure.value.load(ordering: .relaxed))\n"
            }
        }
        text += "# HELP pushhub_jwks_keys Keys of the JWKS in use.\n# TYPE pushhub_jwks_keys gauge\n"
        if keys >= 0 { text += "pushhub_jwks_keys \(keys)\n" }
        return text
    }
}
