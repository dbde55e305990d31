/// Who sees a release's candidate (DESIGN §15 "Who sees it"): the QA cohort always; other units
/// iff `u64(SHA-256("release/{screen}/{id}/{unit}")) % 10000 < percent × 100`, the unit being
/// the JWT `sub` or, for anonymous clients, the device (as for experiments, DESIGN §6).
enum ReleaseExposure {
    /// What is hashed before the unit (a release keeps it: a fan-out buckets every subscriber).
    static func prefix(screen: String, release: String) -> [UInt8] { Array("release/\(screen)/\(release)/".utf8) }

    /// Whether `client` sees `release`'s candidate in `view` (its QA cohort as the view holds it).
    static func exposes(_ release: Release, _ client: ClientAttributes, unit: String, view: HubView) -> Bool {
        exposes(
            prefix: release.bucketPrefix, qaCohort: release.qaCohort, basisPoints: release.basisPoints, client,
            unit: unit, view: view)
    }

    /// The same for a release described by its parts (a dry run asks about a percent it has not);
    /// `prefix` is `prefix(screen:release:)`.
    static func exposes(
        prefix: [UInt8], qaCohort: String?, basisPoints: Int, _ client: ClientAttributes, unit: String, view: HubView
    ) -> Bool {
        if let qaCohort, view.isInCohort(qaCohort, client) { return true }
        return Assignment.bucket(prefix: prefix, unit: unit, suffix: []) < basisPoints
    }

    /// A percent as basis points (hundredths of a percent), rounded to the nearest; nil outside 0…100.
    static func basisPoints(percent: Double) -> Int? {
        guard percent.isFinite, (0...100).contains(percent) else { return nil }
        return Int((percent * 100).rounded())
    }

    /// Basis points as the percent answers show (10, 0.5, 12.35).
    static func percent(basisPoints: Int) -> JSONValue { .number(Double(basisPoints) / 100) }
}
