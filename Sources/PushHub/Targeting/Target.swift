/// Who a sync is for (DESIGN §5): exactly one of a user, users, a cohort or everyone, narrowed
/// by platform and app version range, through one code path (`matches`).
///
/// Invariant: parsed targets hold exactly one scope; `users` is non-empty.
public struct Target: Equatable, Sendable {
    /// Exactly one of DESIGN §5's target kinds.
    public enum Scope: Equatable, Sendable {
        case user(String)
        case users(Set<String>)
        case cohort(String)
        case all
    }

    public var scope: Scope
    public var platform: String?
    public var appVersion: VersionRange?
    /// Narrowed to one variant of a running experiment.
    public var variant: Variant?

    /// One variant of one experiment (`{"exp-key": "B"}`).
    public struct Variant: Equatable, Sendable {
        public var experiment: String
        public var variant: String
    }

    public init(scope: Scope, platform: String? = nil, appVersion: VersionRange? = nil) {
        self.scope = scope
        self.platform = platform
        self.appVersion = appVersion
    }

    /// Whether the target names `user` explicitly (what an offline user gets on connect).
    public func namesUser(_ user: String) -> Bool {
        switch scope {
        case .user(let named): named == user
        case .users(let users): users.contains(user)
        case .cohort, .all: false
        }
    }

    public var json: JSONValue {
        var members = JSONObject()
        switch scope {
        case .user(let user): members["user"] = .string(user)
        case .users(let users): members["users"] = .array(users.sorted().map(JSONValue.string))
        case .cohort(let name): members["cohort"] = .string(name)
        case .all: members["all"] = .bool(true)
        }
        if let platform { members["platform"] = .string(platform) }
        if let appVersion { members["app_version"] = .string(appVersion.description) }
        if let variant { members["variant"] = .object([variant.experiment: .string(variant.variant)]) }
        return .object(members)
    }

    static let fields = ["user", "users", "cohort", "all", "platform", "app_version", "variant"]

    /// Parses the `target` object; errors name the field at fault, unknown fields included.
    public init(json: JSONValue) throws(InputError) {
        guard case .object(let members) = json else {
            throw InputError("bad_target", "\"target\" must be an object")
        }
        try members.refuseUnknownFields(known: Self.fields, at: "target")
        var scopes: [Scope] = []
        if let user = members["user"] {
            guard let id = user.stringValue, !id.isEmpty else {
                throw InputError("bad_target", "\"target.user\" must be a user id")
            }
            scopes.append(.user(id))
        }
        if let users = members["users"] {
            guard let list = users.arrayValue, !list.isEmpty, list.allSatisfy({ $0.stringValue != nil }) else {
                throw InputError("bad_target", "\"target.users\" must be a non-empty array of user ids")
            }
            scopes.append(.users(Set(list.compactMap(\.stringValue))))
        }
        if let cohort = members["cohort"] {
            guard let name = cohort.stringValue, !name.isEmpty else {
                throw InputError("bad_target", "\"target.cohort\" must be a cohort name")
            }
            scopes.append(.cohort(name))
        }
        if let all = members["all"] {
            guard all == .bool(true) else { throw InputError("bad_target", "\"target.all\" can only be true") }
            scopes.append(.all)
        }
        guard scopes.count == 1 else {
            throw InputError("bad_target", "\"target\" needs exactly one of user, users, cohort, all (got \(scopes.count))")
        }
        scope = scopes[0]
        if let platform = members["platform"] {
            guard let text = platform.stringValue else {
                throw InputError("bad_target", "\"target.platform\" must be a string")
            }
            self.platform = text
        }
        if let range = members["app_version"] {
            guard let text = range.stringValue, let parsed = VersionRange(text) else {
                throw InputError("bad_target", "\"target.app_version\" must be a range such as \"<5.3.0\" or \">=5.0.0 <6.0.0\""
                )
            }
            appVersion = parsed
        }
        if let value = members["variant"] {
            guard case .object(let pair) = value, pair.count == 1, let variant = pair.members[0].value.stringValue
            else {
                throw InputError("bad_target", "\"target.variant\" must be {\"experiment-key\": \"variant\"}")
            }
            self.variant = Variant(experiment: pair.members[0].key, variant: variant)
        }
    }
}
