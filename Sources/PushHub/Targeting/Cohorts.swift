/// A rule over client attributes: every given field must match.
public struct CohortRule: Equatable, Sendable {
    public var platforms: [String]?
    public var appVersion: VersionRange?
    /// Token claims that must equal these values.
    public var claims: JSONObject?
    /// Members of this experiment variant (DESIGN §5 "the members of an experiment variant").
    public var variant: (experiment: String, variant: String)?

    public static func == (a: CohortRule, b: CohortRule) -> Bool { a.json == b.json }

    public func matches(_ client: ClientAttributes, in view: HubView) -> Bool {
        if let variant, !view.isInVariant(variant.experiment, variant.variant, client) { return false }
        if let platforms, !platforms.contains(client.platform ?? "") { return false }
        if let appVersion {
            guard let version = client.appVersion, appVersion.contains(version) else { return false }
        }
        if let claims {
            for (key, value) in claims where client.claims[key] != value { return false }
        }
        return true
    }

    public var json: JSONValue {
        var members = JSONObject()
        if let platforms { members["platform"] = .array(platforms.map(JSONValue.string)) }
        if let appVersion { members["app_version"] = .string(appVersion.description) }
        if let claims { members["claims"] = .object(claims) }
        if let variant { members["variant"] = .object([variant.experiment: .string(variant.variant)]) }
        return .object(members)
    }

    /// Parses `{"platform": "ios" | [...], "app_version": RANGE, "claims": {...}}`.
    public init(json: JSONValue) throws(InputError) {
        guard case .object(let members) = json else { throw InputError("bad_rule", "\"rule\" must be an object") }
        try members.refuseUnknownFields(known: ["platform", "app_version", "claims", "variant"], at: "rule")
        if let platform = members["platform"] {
            if let one = platform.stringValue {
                platforms = [one]
            } else if let list = platform.arrayValue, list.allSatisfy({ $0.stringValue != nil }) {
                platforms = list.compactMap(\.stringValue)
            } else {
                throw InputError("bad_rule", "\"rule.platform\" must be a string or an array of strings")
            }
        }
        if let range = members["app_version"] {
            guard let text = range.stringValue, let parsed = VersionRange(text) else {
                throw InputError("bad_rule", "\"rule.app_version\" must be a range such as \">=5.0.0 <6.0.0\"")
            }
            appVersion = parsed
        }
        if let value = members["claims"] {
            guard case .object(let claims) = value else {
                throw InputError("bad_rule", "\"rule.claims\" must be an object")
            }
            self.claims = claims
        }
        if let value = members["variant"] {
            guard case .object(let pair) = value, pair.count == 1, let variant = pair.members[0].value.stringValue
            else {
                throw InputError("bad_rule", "\"rule.variant\" must be {\"experiment-key\": \"variant\"}")
            }
            self.variant = (pair.members[0].key, variant)
        }
    }
}

/// A named set of clients (DESIGN §5): an explicit user list and/or a rule (which may name an
/// experiment variant); token-claim cohorts need no definition.
public struct Cohort: Sendable {
    public var users: Set<String>
    public var rule: CohortRule?
}
