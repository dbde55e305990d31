/// What decides a connected client's capabilities (DESIGN §16): its platform, app version and
/// declared components. Loops count their clients by it; the control plane resolves each against
/// the registry to answer `GET /v1/components` and a publish dry run.
struct ClientBuild: Hashable, Sendable {
    var platform: String?
    var appVersion: SemanticVersion?
    var declared: DeclaredComponents?

    init(_ client: ClientAttributes) {
        platform = client.platform
        appVersion = client.appVersion
        declared = client.components
    }

    init(platform: String?, appVersion: SemanticVersion?, declared: DeclaredComponents?) {
        self.platform = platform
        self.appVersion = appVersion
        self.declared = declared
    }

    var json: JSONValue {
        .object([
            "platform": platform.map(JSONValue.string) ?? .null,
            "app_version": appVersion.map { .string($0.description) } ?? .null,
            "components": declared?.json ?? .null,
        ])
    }

    /// From another hub; nil when it does not parse (that hub's count is then left out).
    init?(json: JSONValue) {
        guard json.objectValue != nil else { return nil }
        platform = json["platform"]?.stringValue
        appVersion = json["app_version"]?.stringValue.flatMap(SemanticVersion.init)
        if let components = json["components"], components != .null {
            guard let declared = try? DeclaredComponents(json: components) else { return nil }
            // try?: a declaration another hub accepted parses here; one that does not is left out.
            self.declared = declared
        }
    }
}
