/// Who a tree is rendered for: the client attributes rendering depends on — its app version
/// (capability filter) and the merge patches of its experiment variants for the screen.
///
/// Invariant: `appVersion == nil` means "an up-to-date client": every capability is met;
/// `variantPatches` are in experiment-key order (the order they apply in).
public struct RenderTarget: Hashable, Sendable {
    public var appVersion: SemanticVersion?
    public var variantPatches: [VariantPatch]

    public init(appVersion: SemanticVersion? = nil, variantPatches: [VariantPatch] = []) {
        self.appVersion = appVersion
        self.variantPatches = variantPatches
    }

    public static let latest = RenderTarget()

    /// Whether the app is in the same variants on this screen as with `other` (no map is built:
    /// this is asked per update a loop sends).
    public func hasSameVariants(as other: RenderTarget) -> Bool {
        variantPatches.count == other.variantPatches.count
            && zip(variantPatches, other.variantPatches).allSatisfy {
                $0.experiment == $1.experiment && $0.variant == $1.variant
            }
    }

    /// The app's variants on this screen (`"variants"` of DESIGN §6), by experiment key.
    public var variants: JSONObject {
        JSONObject(
            Dictionary(variantPatches.map { ($0.experiment, JSONValue.string($0.variant)) }, uniquingKeysWith: { a, _ in a })
        )
    }
}

/// Names a rendition of one screen version: the variant patches applied and how many capability
/// thresholds of the merged tree are met. Clients with equal keys see byte-identical trees.
public struct RenditionKey: Hashable, Sendable {
    public var patches: [String]
    public var capabilities: Int
}

/// DESIGN §4 renditions: what one client sees of a screen version. Today: the capability
/// filter — a node object carrying `"min_app_version"` is replaced, for clients below that
/// version, by its `"fallback"` (or removed when it has none); clients at or above it get the
/// node without those two keys.
///
/// Invariant: clients whose `key` is equal see byte-identical trees; the key only names the
/// capability thresholds of this tree the client meets, so there are at most thresholds+1
/// renditions per version.
public enum Rendition {
    /// Where `tree` has a `min_app_version` that is not a semantic version (a string such as
    /// "5.3.0" whose numbers fit): such a node would reach every client unfiltered, its keys
    /// included, so a publish naming one is refused.
    public static func invalidThreshold(in tree: JSONValue, at path: JSONPointer = JSONPointer()) -> JSONPointer? {
        switch tree {
        case .object(let members):
            if let value = members["min_app_version"] {
                guard let text = value.stringValue, SemanticVersion(text) != nil else {
                    return path.appending("min_app_version")
                }
            }
            for (key, member) in members where member.isContainer {
                if let found = invalidThreshold(in: member, at: path.appending(key)) { return found }
            }
            return nil
        case .array(let elements):
            for (index, element) in elements.enumerated() where element.isContainer {
                if let found = invalidThreshold(in: element, at: path.appending(index)) { return found }
            }
            return nil
        default:
            return nil
        }
    }

    /// The distinct `min_app_version` values in `tree` (valid ones), sorted.
    public static func thresholds(in tree: JSONValue) -> [SemanticVersion] {
        var found = Set<SemanticVersion>()
        collect(tree, into: &found)
        return found.sorted()
    }

    private static func collect(_ value: JSONValue, into found: inout Set<SemanticVersion>) {
        switch value {
        case .object(let members):
            if let text = members["min_app_version"]?.stringValue, let version = SemanticVersion(text) {
                found.insert(version)
            }
            for (_, member) in members where member.isContainer { collect(member, into: &found) }
        case .array(let elements):
            for element in elements where element.isContainer { collect(element, into: &found) }
        default:
            break
        }
    }

    /// The rendition key of `target` for a tree with these thresholds: how many it meets
    /// (thresholds are sorted, so meeting one means meeting every lower one).
    public static func key(for target: RenderTarget, thresholds: [SemanticVersion]) -> Int {
        guard let version = target.appVersion else { return thresholds.count }
        return thresholds.prefix { $0 <= version }.count
    }

    /// Renders `tree` for `target`. A root that is itself removed renders as `null`.
    public static func render(_ tree: JSONValue, for target: RenderTarget) -> JSONValue {
        filter(tree, for: target) ?? .null
    }

    /// nil: the node is removed.
    private static func filter(_ value: JSONValue, for target: RenderTarget) -> JSONValue? {
        switch value {
        case .object(var members):
            if let text = members["min_app_version"]?.stringValue, let required = SemanticVersion(text) {
                let isMet = target.appVersion.map { required <= $0 } ?? true
                if !isMet {
                    guard let fallback = members["fallback"] else { return nil }
                    return filter(fallback, for: target)
                }
                members["min_app_version"] = nil
                members["fallback"] = nil
            }
            var kept: [JSONObject.Member] = []
            kept.reserveCapacity(members.count)
            for (key, member) in members {
                if let value = filter(member, for: target) { kept.append((key: key, value: value)) }
            }
            return .object(JSONObject(sortedMembers: kept))
        case .array(let elements):
            return .array(elements.compactMap { filter($0, for: target) })
        default:
            return value
        }
    }
}
