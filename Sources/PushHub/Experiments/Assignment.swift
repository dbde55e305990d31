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
    /// A unit's variant with the step that decided it, or why it is not in the experiment.
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

    public static func assign(
        _ experiment: Experiment, unit: String, client: ClientAttributes?,
        view: HubView?
    ) -> Outcome {
        if let forced = experiment.overrides[unit] { return .variant(forced, reason: "override") }
        if let platforms = experiment.audience.platforms, !platforms.contains(client?.platform ?? "") {
            return .notInExperiment(reason: "audience: platform")
        }
        if let range = experiment.audience.appVersion {
            guard let version = client?.appVersion, range.contains(version) else {
                return .notInExperiment(reason: "audience: app_version")
            }
        }
        if let cohort = experiment.audience.cohort {
            guard let client, let view, view.isInCohort(cohort, client) else {
                return .notInExperiment(reason: "audience: cohort")
            }
        }
        let prefix = experiment.hashPrefix
        if experiment.layer != nil, let range = experiment.layerRange {
            guard range.contains(bucket(prefix: experiment.layerPrefix, unit: unit, suffix: [])) else {
                return .notInExperiment(reason: "layer range")
            }
        } else if experiment.traffic < 1 {
            guard bucket(prefix: prefix, unit: unit, suffix: []) < Int((experiment.traffic * 10_000).rounded(.down))
            else {
                return .notInExperiment(reason: "traffic")
            }
        }  // at traffic 1 every bucket (< 10000) is in: no need to hash
        let v = bucket(prefix: prefix, unit: unit, suffix: variantSuffix)
        for (i, upper) in experiment.variantUpperBounds.enumerated() where v < upper {
            return .variant(experiment.variants[i].key, reason: "bucket")
        }
        return .variant(experiment.variants.last!.key, reason: "bucket")  // unreachable: the ranges cover 0..<10000
    }

    static let variantSuffix = Array("/variant".utf8)

    /// `u64(SHA-256(prefix + unit + suffix)) % 10000`, hashing from a stack buffer (no allocation).
    static func bucket(prefix: [UInt8], unit: String, suffix: [UInt8]) -> Int {
        var unit = unit
        return unit.withUTF8 { unitBytes in
            let count = prefix.count + unitBytes.count + suffix.count
            return withUnsafeTemporaryAllocation(byteCount: count, alignment: 8) { buffer in
                var offset = 0
                prefix.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                offset = prefix.count
                if unitBytes.count > 0 {
                    (buffer.baseAddress! + offset).copyMemory(from: unitBytes.baseAddress!, byteCount: unitBytes.count)
                }
                offset += unitBytes.count
                if !suffix.isEmpty {
                    suffix.withUnsafeBytes {
                        (buffer.baseAddress! + offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count)
                    }
                }
                return sha256Bucket(UnsafeRawBufferPointer(start: buffer.baseAddress, count: count))
            }
        }
    }

    /// `u64(SHA-256(bytes)) % 10000` with a context on the stack: the low-level API skips the
    /// EVP algorithm fetch (a lock) and the context allocation of the one-shot `SHA256()`.
    static func sha256Bucket(_ bytes: UnsafeRawBufferPointer) -> Int {
        var context = SHA256_CTX()
        var digest = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        SHA256_Init(&context)
        SHA256_Update(&context, bytes.baseAddress, bytes.count)
        withUnsafeMutableBytes(of: &digest) {
            _ = SHA256_Final($0.baseAddress!.assumingMemoryBound(to: UInt8.self), &context)
        }
        return Int(UInt64(bigEndian: digest.0) % 10_000)
    }

    /// `u64(SHA-256(text)) % 10000`.
    public static func bucket(_ text: String) -> Int {
        var input = text
        return input.withUTF8 { sha256Bucket(UnsafeRawBufferPointer($0)) }
    }
}
