import COpenSSL

/// DESIGN §6 assignment: a pure function of (definition, unit, client attributes), the same on
/// every hub and reproducible by analysts (docs/assignment.md has the reference in Python).
///
/// With `u64(x)` = the first 8 bytes of x read big-endian:
/// 1. an override for the unit wins; then the audience must match;
/// 2. without a layer: in iff `u64(SHA-256("{salt}/{key}/{unit}")) % 10000 < floor(traffic × 10000)`;
///    with a layer: in iff `from ≤ u64(SHA-256("layer/{layer}/{unit}")) % 10000 < to`;
/// 3. variant: `v = u64(SHA-256("{salt}/{key}/{unit}/variant")) % 10000`; variant i owns
///    `[floor(10000·(w₁+…+wᵢ₋₁)/W), floor(10000·(w₁+…+wᵢ)/W))`.
public enum Assignment {
    public enum Outcome: Equatable, Sendable {
        case variant(String, reason: String)
        case notInExperiment(reason: String)

        public var variant: String? {
            if case .variant(let key, _) = self { return key }
            return nil
        }

        public var reason: String {
            switch self {
            case .variant(_, let reason), .notInExperiment(let reason): reason
            }
        }
    }

    public static func assign(_ experiment: Experiment, unit: String, client: ClientAttributes?,
                              cohorts: CohortStore?) -> Outcome {
        if let forced = experiment.overrides[unit] { return .variant(forced, reason: "override") }
        if let platforms = experiment.audience.platforms, !platforms.contains(client?.platform ?? "") {
            return .notInExperiment(reason: "audience: platform")
        }
        if let range = experiment.audience.appVersion {
            guard let version = client?.appVersion, range.contains(version) else { return .notInExperiment(reason: "audience: app_version") }
        }
        if let cohort = experiment.audience.cohort {
            guard let client, let cohorts, cohorts.contains(cohort, client) else { return .notInExperiment(reason: "audience: cohort") }
        }
        if let layer = experiment.layer, let range = experiment.layerRange {
            guard range.contains(bucket("layer/\(layer)/\(unit)")) else { return .notInExperiment(reason: "layer range") }
        } else {
            guard bucket("\(experiment.salt)/\(experiment.key)/\(unit)") < Int((experiment.traffic * 10_000).rounded(.down)) else {
                return .notInExperiment(reason: "traffic")
            }
        }
        let v = bucket("\(experiment.salt)/\(experiment.key)/\(unit)/variant")
        let total = experiment.totalWeight
        var cumulative = 0
        for variant in experiment.variants {
            let from = 10_000 * cumulative / total
            cumulative += variant.weight
            let to = 10_000 * cumulative / total
            if from <= v && v < to { return .variant(variant.key, reason: "bucket") }
        }
        return .variant(experiment.variants.last!.key, reason: "bucket")  // unreachable: the ranges cover 0..<10000
    }

    /// `u64(SHA-256(text)) % 10000`.
    public static func bucket(_ text: String) -> Int {
        var digest = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        var input = text
        input.withUTF8 { bytes in
            withUnsafeMutableBytes(of: &digest) { out in
                _ = SHA256(bytes.baseAddress, bytes.count, out.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return Int(UInt64(bigEndian: digest.0) % 10_000)
    }
}
