/// The components the hub knows and the app profiles (DESIGN §16), as every loop's view holds
/// them, and what follows for each client: the capabilities rendering judges it by.
///
/// Invariants: `profiles[p]` is sorted by app version, with at most one profile per version;
/// `latest` renders every version of every registered component.
public struct ComponentRegistry: Sendable {
    /// A registered component and when it was last registered.
    public struct Registered: Sendable, Equatable {
        public var component: Component
        /// Milliseconds since the Unix epoch.
        public var updatedAt: Int
    }

    public private(set) var components: [String: Registered] = [:]
    public private(set) var profiles: [String: [AppProfile]] = [:]
    /// What an up-to-date client that renders everything is judged by.
    public private(set) var latest = Capabilities.latest
    /// The limits of a client with neither a declaration nor a profile: every valid version of
    /// every registered component.
    private var everything: [String: Int] = [:]

    public init() {}

    /// The registered components by name, as validation takes them.
    var componentsByName: [String: Component] { components.mapValues(\.component) }

    // MARK: - Changes

    mutating func put(_ component: Component, at time: Int) {
        components[component.name] = Registered(component: component, updatedAt: time)
        changed()
    }

    mutating func delete(_ name: String) {
        components[name] = nil
        changed()
    }

    mutating func put(_ profile: AppProfile) {
        var list = profiles[profile.platform] ?? []
        list.removeAll { $0.appVersion == profile.appVersion }
        list.append(profile)
        list.sort { $0.appVersion < $1.appVersion }
        profiles[profile.platform] = list
        changed()
    }

    mutating func deleteProfile(platform: String, appVersion: SemanticVersion) {
        profiles[platform]?.removeAll { $0.appVersion == appVersion }
        if profiles[platform]?.isEmpty == true { profiles[platform] = nil }
        changed()
    }

    private mutating func changed() {
        everything = components.mapValues { _ in ComponentName.versions.upperBound }
        latest = Capabilities(appVersion: nil, limits: everything)
    }

    // MARK: - What a client can render

    /// The profile registered at exactly `appVersion` of `platform`.
    public func profile(_ platform: String, exactly appVersion: SemanticVersion) -> AppProfile? {
        profiles[platform]?.first { $0.appVersion == appVersion }
    }

    /// The profile that applies to a build: the newest of its platform at or below its version.
    /// Profiles are registered under lowercase platforms; a client's `iOS` is `ios` here (an app
    /// that spells it otherwise must not fall back to rendering everything).
    public func profile(_ platform: String?, for appVersion: SemanticVersion?) -> AppProfile? {
        guard let platform, let appVersion, let list = profiles[platform] ?? profiles[platform.lowercased()] else {
            return nil
        }
        return list.last { $0.appVersion <= appVersion }
    }

    /// What a client renders (DESIGN §16): what it declared, else its build's profile, else
    /// everything — judged only for registered components. Not interned (loops intern).
    public func capabilities(
        platform: String?, appVersion: SemanticVersion?, declared: DeclaredComponents?
    ) -> Capabilities {
        let source = declared ?? profile(platform, for: appVersion)?.components
        guard let source else {
            return appVersion == nil ? latest : Capabilities(appVersion: appVersion, limits: everything)
        }
        var limits = everything
        for name in components.keys { limits[name] = source.versions[name] ?? 0 }
        return Capabilities(appVersion: appVersion, limits: limits)
    }

    /// The same for a connected client.
    public func capabilities(of client: ClientAttributes) -> Capabilities {
        capabilities(platform: client.platform, appVersion: client.appVersion, declared: client.components)
    }
}

extension ComponentRegistry: Equatable {
    /// Equal registrations and profiles.
    public static func == (a: ComponentRegistry, b: ComponentRegistry) -> Bool {
        a.components == b.components && a.profiles == b.profiles
    }
}
