/// A publish dry run's answer to "who would get a fallback" (DESIGN §16): for each node some
/// connected client would not render, whether it gets the fallback or loses the node, and how
/// many clients, in all and by platform and app version.
///
/// Invariant: a client is counted at a node exactly when `Rendition.render` for its capabilities
/// would not render that node (both follow `Rendition.substitutions`); the tree is walked once per
/// distinct capabilities, not per client.
enum FallbackReport {
    static func json(tree: JSONValue, builds: [ClientBuild: Int], registry: ComponentRegistry) -> JSONValue {
        struct Place: Hashable {
            var pointer: String
            var need: ComponentNeed?
            var outcome: Rendition.Substitution.Outcome
        }
        struct App: Hashable {
            var platform: String?
            var appVersion: SemanticVersion?
        }
        var substitutions: [Capabilities: [Rendition.Substitution]] = [:]
        var counts: [Place: [App: Int]] = [:]
        var order: [Place] = []
        for (build, count) in builds {
            let capabilities = registry.capabilities(
                platform: build.platform, appVersion: build.appVersion, declared: build.declared)
            let found =
                substitutions[capabilities]
                ?? {
                    let made = Rendition.substitutions(in: tree, for: capabilities)
                    substitutions[capabilities] = made
                    return made
                }()
            for substitution in found {
                let place = Place(pointer: substitution.pointer, need: substitution.need, outcome: substitution.outcome)
                if counts[place] == nil { order.append(place) }
                counts[place, default: [:]][App(platform: build.platform, appVersion: build.appVersion), default: 0] &+=
                    count
            }
        }
        // Document order (a node before what is inside it, array elements by index, members by
        // name as the canonical form orders them); for one node, fallback before removal.
        order.sort { a, b in
            a.pointer == b.pointer ? a.outcome.rawValue < b.outcome.rawValue : Self.precedes(a.pointer, b.pointer)
        }
        let places = order.map { place -> JSONValue in
            let apps = counts[place]!
            let byApp = apps.sorted { a, b in
                if a.key.platform != b.key.platform { return (a.key.platform ?? "") < (b.key.platform ?? "") }
                guard let first = a.key.appVersion, let second = b.key.appVersion else {
                    return a.key.appVersion == nil
                }
                return first < second
            }.map { app, count -> JSONValue in
                .object([
                    "platform": app.platform.map(JSONValue.string) ?? .null,
                    "app_version": app.appVersion.map { .string($0.description) } ?? .null,
                    "clients": .number(Double(count)),
                ])
            }
            return .object([
                "pointer": .string(place.pointer), "type": place.need.map { .string($0.component) } ?? .null,
                "v": place.need.map { $0.version == Int.max ? .null : .number(Double($0.version)) } ?? .null,
                "outcome": .string(place.outcome.rawValue),
                "clients": .number(Double(apps.values.reduce(0, &+))), "by_app": .array(byApp),
            ])
        }
        return .object(["clients": .number(Double(builds.values.reduce(0, &+))), "fallbacks": .array(places)])
    }

    /// Whether the node at pointer `a` comes before the one at `b` in the tree: token by token,
    /// indexes as numbers (`/children/2` before `/children/10`), a node before its descendants.
    static func precedes(_ a: String, _ b: String) -> Bool {
        let first = JSONPointer(parsing: a)?.tokens ?? [], second = JSONPointer(parsing: b)?.tokens ?? []
        for (x, y) in zip(first, second) where x != y {
            if let i = Int(x), let j = Int(y) { return i < j }
            return x < y
        }
        return first.count < second.count
    }
}
