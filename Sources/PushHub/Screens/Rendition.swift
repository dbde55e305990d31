/// Who a tree is rendered for: the client attributes rendering depends on — what it can render
/// (its app version and components, DESIGN §4, §16) and the merge patches of its experiment
/// variants for the screen.
///
/// Invariant: `variantPatches` are in experiment-key order (the order they apply in).
public struct RenderTarget: Hashable, Sendable {
    public var capabilities: Capabilities
    public var variantPatches: [VariantPatch]

    public init(capabilities: Capabilities, variantPatches: [VariantPatch] = []) {
        self.capabilities = capabilities
        self.variantPatches = variantPatches
    }

    /// A client at `appVersion` (nil: up to date) of a hub with no components registered.
    public init(appVersion: SemanticVersion? = nil, variantPatches: [VariantPatch] = []) {
        self.init(
            capabilities: appVersion.map { Capabilities(appVersion: $0, limits: [:]) } ?? .latest,
            variantPatches: variantPatches)
    }

    /// An up-to-date client without variants of a hub with no components registered (the hub's own
    /// "latest" target is `ComponentRegistry.latest`, which judges its registered components).
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
            Dictionary(
                variantPatches.map { ($0.experiment, JSONValue.string($0.variant)) }, uniquingKeysWith: { a, _ in a })
        )
    }
}

/// Names a rendition of one screen version: the variant patches applied, how many capability
/// thresholds of the merged tree are met, and how the client fares with each component need of
/// it. Clients with equal keys see byte-identical trees.
public struct RenditionKey: Hashable, Sendable {
    public var patches: [String]
    public var capabilities: Int
    /// One judgement per need of the merged tree (`TreeRequirements.components`, in order).
    public var components: [ComponentJudgement]

    public init(patches: [String], capabilities: Int, components: [ComponentJudgement] = []) {
        self.patches = patches
        self.capabilities = capabilities
        self.components = components
    }
}

/// What a tree asks of the clients that render it: the distinct `min_app_version` thresholds
/// (valid ones, sorted) and the distinct components and versions its nodes need (sorted), found
/// in one walk — fallbacks included.
public struct TreeRequirements: Sendable, Equatable {
    public var thresholds: [SemanticVersion] = []
    public var components: [ComponentNeed] = []

    public init(_ tree: JSONValue) {
        var thresholds = Set<SemanticVersion>()
        var needs = Set<ComponentNeed>()
        Self.collect(tree, &thresholds, &needs)
        self.thresholds = thresholds.sorted()
        components = needs.sorted()
    }

    private static func collect(
        _ value: JSONValue, _ thresholds: inout Set<SemanticVersion>, _ needs: inout Set<ComponentNeed>
    ) {
        switch value {
        case .object(let members):
            if let text = members["min_app_version"]?.stringValue, let version = SemanticVersion(text) {
                thresholds.insert(version)
            }
            if let need = ComponentNeed(node: members) { needs.insert(need) }
            for (_, member) in members where member.isContainer { collect(member, &thresholds, &needs) }
        case .array(let elements):
            for element in elements where element.isContainer { collect(element, &thresholds, &needs) }
        default:
            break
        }
    }

    /// Whether every client sees the tree as it is: no thresholds, and no need `capabilities` judge.
    func leavesUnchanged(for capabilities: Capabilities) -> Bool {
        thresholds.isEmpty
            && (capabilities.limits.isEmpty || components.allSatisfy { capabilities.judge($0) == .passes })
    }
}

/// DESIGN §4, §16 renditions: what one client sees of a screen version. A node the client cannot
/// render — one carrying a `"min_app_version"` above its app version, or one of a registered
/// component whose version (`"v"`) it does not render — is replaced by its `"fallback"`
/// (filtered in turn), or removed when it has none; a node the client can render loses those
/// keys (`min_app_version`, `fallback`). Nodes of unregistered components pass as they are.
///
/// Invariant: clients whose `key` is equal see byte-identical trees; the key only names the
/// thresholds met and the judgement of each need of this tree, so there are at most
/// (thresholds+1) × 3^needs renditions per version, and in practice one per distinct app build.
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
    public static func thresholds(in tree: JSONValue) -> [SemanticVersion] { TreeRequirements(tree).thresholds }

    /// How many of `thresholds` (sorted) `capabilities` meets: meeting one means meeting every lower one.
    public static func key(for capabilities: Capabilities, thresholds: [SemanticVersion]) -> Int {
        guard let version = capabilities.appVersion else { return thresholds.count }
        return thresholds.prefix { $0 <= version }.count
    }

    /// The same for a target.
    public static func key(for target: RenderTarget, thresholds: [SemanticVersion]) -> Int {
        key(for: target.capabilities, thresholds: thresholds)
    }

    /// Renders `tree` for `target`. A root that is itself removed renders as `null`.
    public static func render(_ tree: JSONValue, for target: RenderTarget) -> JSONValue {
        filter(tree, for: target.capabilities) ?? .null
    }

    /// Whether a client with `capabilities` renders the node itself (not its fallback).
    static func renders(_ members: JSONObject, _ capabilities: Capabilities) -> (renders: Bool, judged: Bool) {
        var judged = false
        if let text = members["min_app_version"]?.stringValue, let required = SemanticVersion(text) {
            if let version = capabilities.appVersion, version < required { return (false, true) }
            judged = true
        }
        if let need = ComponentNeed(node: members) {
            switch capabilities.judge(need) {
            case .passes: break
            case .renders: judged = true
            case .cannotRender: return (false, true)
            }
        }
        return (true, judged)
    }

    /// Where a node is not rendered for a client: replaced by its fallback, or removed.
    public struct Substitution: Hashable, Sendable {
        public enum Outcome: String, Sendable { case fallback, removed }
        /// The node's place in the published tree (RFC 6901; inside a fallback, through `/fallback`).
        public var pointer: String
        /// The node's component and version, if it is a node.
        public var need: ComponentNeed?
        public var outcome: Outcome
    }

    /// Every node rendering for `capabilities` does not render, in document order: the dry run's
    /// "who would get a fallback" (DESIGN §16). Follows `filter` exactly: a node rendered is
    /// searched without its fallback when judged; a fallback in turn; nothing under a removed node.
    public static func substitutions(in tree: JSONValue, for capabilities: Capabilities) -> [Substitution] {
        var found: [Substitution] = []
        collectSubstitutions(tree, JSONPointer(), capabilities, &found)
        return found
    }

    private static func collectSubstitutions(
        _ value: JSONValue, _ pointer: JSONPointer, _ capabilities: Capabilities, _ found: inout [Substitution]
    ) {
        switch value {
        case .object(let members):
            let (renders, judged) = renders(members, capabilities)
            if !renders {
                let fallback = members["fallback"]
                found.append(
                    Substitution(
                        pointer: pointer.description, need: ComponentNeed(node: members),
                        outcome: fallback == nil ? .removed : .fallback))
                if let fallback { collectSubstitutions(fallback, pointer.appending("fallback"), capabilities, &found) }
                return
            }
            for (key, member) in members where member.isContainer && !(judged && key == "fallback") {
                collectSubstitutions(member, pointer.appending(key), capabilities, &found)
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() where element.isContainer {
                collectSubstitutions(element, pointer.appending(index), capabilities, &found)
            }
        default:
            break
        }
    }

    /// nil: the node is removed.
    private static func filter(_ value: JSONValue, for capabilities: Capabilities) -> JSONValue? {
        switch value {
        case .object(var members):
            let (renders, judged) = renders(members, capabilities)
            if !renders {
                guard let fallback = members["fallback"] else { return nil }
                return filter(fallback, for: capabilities)
            }
            if judged {
                if members["min_app_version"]?.stringValue.flatMap(SemanticVersion.init) != nil {
                    members["min_app_version"] = nil
                }
                members["fallback"] = nil
            }
            var kept: [JSONObject.Member] = []
            kept.reserveCapacity(members.count)
            for (key, member) in members {
                if let value = filter(member, for: capabilities) { kept.append((key: key, value: value)) }
            }
            return .object(JSONObject(sortedMembers: kept))
        case .array(let elements):
            return .array(elements.compactMap { filter($0, for: capabilities) })
        default:
            return value
        }
    }
}
