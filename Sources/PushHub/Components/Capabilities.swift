/// What one client can render, as rendering judges it (DESIGN §4, §16): its app version, against
/// which `min_app_version` thresholds are met, and for each registered component the highest
/// version it renders.
///
/// Invariants: immutable; `limits` names exactly the components registered when it was resolved
/// (`ComponentRegistry.capabilities`): a component absent from it is unregistered and its nodes
/// pass unjudged; a limit of 0 means the client renders no version of it,
/// `ComponentName.versions.upperBound` every valid one (a node whose `"v"` is not valid needs more).
/// Equal capabilities render every tree identically. Loops intern them (`RenditionCache`), so
/// most comparisons end at identity.
public final class Capabilities: Hashable, Sendable, CustomStringConvertible {
    /// nil: an up-to-date client, which meets every threshold.
    public let appVersion: SemanticVersion?
    public let limits: [String: Int]
    private let hashCode: Int

    public init(appVersion: SemanticVersion?, limits: [String: Int]) {
        self.appVersion = appVersion
        self.limits = limits
        var hasher = Hasher()
        hasher.combine(appVersion)
        hasher.combine(limits)
        hashCode = hasher.finalize()
    }

    /// An up-to-date client of a hub with no components registered.
    public static let latest = Capabilities(appVersion: nil, limits: [:])

    /// How this client fares with a node that needs `need`.
    @inline(__always)
    public func judge(_ need: ComponentNeed) -> ComponentJudgement {
        guard let limit = limits[need.component] else { return .passes }
        return need.version <= limit ? .renders : .cannotRender
    }

    public static func == (a: Capabilities, b: Capabilities) -> Bool {
        a === b || (a.hashCode == b.hashCode && a.appVersion == b.appVersion && a.limits == b.limits)
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(hashCode) }

    public var description: String {
        let parts = limits.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }
        return "app \(appVersion?.description ?? "latest") [\(parts.joined(separator: ","))]"
    }
}

/// How one client fares with one kind of node (DESIGN §16).
public enum ComponentJudgement: UInt8, Hashable, Sendable {
    /// The component is not registered: the node passes as it is (its `fallback` included).
    case passes
    /// Registered, and the client renders the node's version: it gets the node without `fallback`.
    case renders
    /// Registered, and the client does not render that version: it gets the `fallback`, or nothing.
    case cannotRender
}

/// A component at a version, as a tree's nodes need it (`"type"` and `"v"`).
public struct ComponentNeed: Hashable, Comparable, Sendable {
    public var component: String
    public var version: Int

    public init(component: String, version: Int) {
        self.component = component
        self.version = version
    }

    /// What `node` needs, if it is a node of a component that can be registered (an object whose
    /// `"type"` is a component name, `ComponentName.isValid`: other types are never judged — and
    /// Swift's string equality, which holds "\u{212A}" (KELVIN SIGN) equal to "K", never makes one
    /// look like a registered name; validation compares names scalar by scalar). Its version is `"v"`:
    /// absent means 1; a value that is not a positive integer means a version no client renders
    /// (publishing refuses such a node of a registered component; one published before its
    /// component was registered falls back for everyone rather than reach a client unjudged).
    public init?(node members: JSONObject) {
        guard let component = members["type"]?.stringValue, ComponentName.isValid(component) else { return nil }
        self.component = component
        guard let v = members["v"] else {
            version = 1
            return
        }
        if let number = v.intValue, number > 0 { version = number } else { version = Int.max }
    }

    public static func < (a: ComponentNeed, b: ComponentNeed) -> Bool {
        (a.component, a.version) < (b.component, b.version)
    }
}
