/// An app version as SemVer 2.0.0 orders it (`5.2.0` < `5.3.0-beta.1` < `5.3.0`); build
/// metadata is ignored. Missing minor/patch parts count as 0 (`5.3` = `5.3.0`), as apps send them.
///
/// Invariant: comparison follows SemVer §11.
public struct SemanticVersion: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var major: Int
    public var minor: Int
    public var patch: Int
    public var prerelease: [String]

    public init?(_ text: String) {
        var core = Substring(text)
        if let plus = core.firstIndex(of: "+") { core = core[..<plus] }
        var prerelease: [String] = []
        if let dash = core.firstIndex(of: "-") {
            prerelease = core[core.index(after: dash)...].split(separator: ".", omittingEmptySubsequences: false).map(
                String.init)
            guard !prerelease.contains(where: \.isEmpty) else { return nil }
            core = core[..<dash]
        }
        let numbers = core.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(numbers.count) else { return nil }
        var parts: [Int] = []
        for number in numbers {
            guard !number.isEmpty, number.allSatisfy(\.isASCII), let value = Int(number), value >= 0 else { return nil }
            parts.append(value)
        }
        while parts.count < 3 { parts.append(0) }
        (major, minor, patch) = (parts[0], parts[1], parts[2])
        self.prerelease = prerelease
    }

    public var description: String {
        "\(major).\(minor).\(patch)" + (prerelease.isEmpty ? "" : "-" + prerelease.joined(separator: "."))
    }

    public static func < (a: SemanticVersion, b: SemanticVersion) -> Bool {
        if (a.major, a.minor, a.patch) != (b.major, b.minor, b.patch) {
            return (a.major, a.minor, a.patch) < (b.major, b.minor, b.patch)
        }
        // A release ranks above its pre-releases.
        if a.prerelease.isEmpty { return false }
        if b.prerelease.isEmpty { return true }
        for (x, y) in zip(a.prerelease, b.prerelease) where x != y {
            switch (Int(x), Int(y)) {
            case (let i?, let j?): return i < j
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return x < y
            }
        }
        return a.prerelease.count < b.prerelease.count
    }
}
