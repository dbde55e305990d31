/// A range of app versions: comparators separated by spaces, all of which must hold
/// (`<5.3.0`, `>=5.0.0 <6.0.0`, `=5.2.1`; a bare version means `=`).
///
/// Invariant: at least one comparator; every comparator's version parses as `SemanticVersion`.
public struct VersionRange: Equatable, Sendable, CustomStringConvertible {
    enum Comparison: String, Sendable {
        case less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">=", equal = "="
    }

    let comparators: [(Comparison, SemanticVersion)]
    public let description: String

    public init?(_ text: String) {
        var comparators: [(Comparison, SemanticVersion)] = []
        for part in text.split(separator: " ") {
            var rest = Substring(part)
            var comparison = Comparison.equal
            for candidate in [Comparison.lessOrEqual, .greaterOrEqual, .less, .greater, .equal]
            where rest.hasPrefix(candidate.rawValue) {
                comparison = candidate
                rest = rest.dropFirst(candidate.rawValue.count)
                break
            }
            guard let version = SemanticVersion(String(rest)) else { return nil }
            comparators.append((comparison, version))
        }
        guard !comparators.isEmpty else { return nil }
        self.comparators = comparators
        description = text
    }

    public func contains(_ version: SemanticVersion) -> Bool {
        comparators.allSatisfy { comparison, bound in
            switch comparison {
            case .less: version < bound
            case .lessOrEqual: version <= bound
            case .greater: version > bound
            case .greaterOrEqual: version >= bound
            case .equal: version == bound
            }
        }
    }

    public static func == (a: VersionRange, b: VersionRange) -> Bool { a.description == b.description }
}
