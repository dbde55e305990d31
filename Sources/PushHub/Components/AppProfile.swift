/// What the builds of one platform from one app version on can render (DESIGN §16), registered
/// by the app's CI at release time: `PUT /v1/apps/{platform}/{version}/components`.
///
/// Invariant: applies to a client of `platform` whose app version is at or above `appVersion` and
/// below the next profile's of that platform (`ComponentRegistry.profile`).
public struct AppProfile: Sendable, Equatable {
    public var platform: String
    public var appVersion: SemanticVersion
    public var components: DeclaredComponents
    /// Milliseconds since the Unix epoch.
    public var updatedAt: Int

    public init(platform: String, appVersion: SemanticVersion, components: DeclaredComponents, updatedAt: Int) {
        self.platform = platform
        self.appVersion = appVersion
        self.components = components
        self.updatedAt = updatedAt
    }

    /// A PUT body `{"components":{"Carousel":1,…}}`; the error names what is wrong.
    static func components(body: JSONValue) throws(InputError) -> DeclaredComponents {
        guard let members = body.objectValue, let components = members["components"] else {
            throw InputError(
                "bad_profile",
                "send {\"components\":{\"Carousel\":1,…}}: each component the build renders and its highest version")
        }
        if let unknown = members.keys.first(where: { $0 != "components" }) {
            throw InputError("bad_profile", "unknown member \"\(unknown)\"; a profile has only \"components\"")
        }
        do {
            return try DeclaredComponents(json: components)
        } catch {
            throw InputError("bad_profile", error.message)
        }
    }

    public var json: JSONValue {
        .object([
            "platform": .string(platform), "app_version": .string(appVersion.description),
            "components": components.json, "updated_at": .number(Double(updatedAt)),
        ])
    }
}
