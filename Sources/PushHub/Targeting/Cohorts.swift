import Synchronization

/// A rule over client attributes: every given field must match.
public struct CohortRule: Equatable, Sendable {
    public var platforms: [String]?
    public var appVersion: VersionRange?
    /// Token claims that must equal these values.
    public var claims: JSONObject?
    /// Members of this experiment variant (DESIGN §5 "the members of an experiment variant").
    public var variant: (experiment: String, variant: String)?

    public static func == (a: CohortRule, b: CohortRule) -> Bool { a.json == b.json }

    public func matches(_ client: ClientAttributes, cohorts: CohortStore) -> Bool {
        if let variant, !cohorts.isInVariant(variant.experiment, variant.variant, client) { return false }
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
    public init(json: JSONValue) throws(AdminError) {
        guard case .object(let members) = json else { throw AdminError(400, "bad_rule", "\"rule\" must be an object") }
        if let platform = members["platform"] {
            if let one = platform.stringValue {
                platforms = [one]
            } else if let list = platform.arrayValue, list.allSatisfy({ $0.stringValue != nil }) {
                platforms = list.compactMap(\.stringValue)
            } else {
                throw AdminError(400, "bad_rule", "\"rule.platform\" must be a string or an array of strings")
            }
        }
        if let range = members["app_version"] {
            guard let text = range.stringValue, let parsed = VersionRange(text) else {
                throw AdminError(400, "bad_rule", "\"rule.app_version\" must be a range such as \">=5.0.0 <6.0.0\"")
            }
            appVersion = parsed
        }
        if let value = members["claims"] {
            guard case .object(let claims) = value else {
                throw AdminError(400, "bad_rule", "\"rule.claims\" must be an object")
            }
            self.claims = claims
        }
        if let value = members["variant"] {
            guard case .object(let pair) = value, pair.count == 1, let variant = pair.members[0].value.stringValue
            else {
                throw AdminError(400, "bad_rule", "\"rule.variant\" must be {\"experiment-key\": \"variant\"}")
            }
            self.variant = (pair.members[0].key, variant)
        }
    }
}

/// A named set of clients (DESIGN §5): an explicit user list and/or a rule; token-claim cohorts
/// need no definition. Experiment-variant cohorts come with the experiments issue.
public struct Cohort: Sendable {
    public var users: Set<String>
    public var rule: CohortRule?
}

/// Every cohort, shared by the loops and the admin API; durable through its `RecordLog`.
///
/// Invariant: a client is in cohort C iff its user is in C's list, or C's rule matches it, or its
/// token's `cohorts` claim names C.
public final class CohortStore: Sendable {
    private let cohorts = Mutex<[String: Cohort]>([:])  // guarded by itself
    /// Where variant conditions (`{"variant":{"exp":"B"}}`) look assignments up; set once at start.
    private let experiments = Mutex<ExperimentStore?>(nil)

    public func attach(_ store: ExperimentStore) { experiments.withLock { $0 = store } }

    /// Whether `client` is assigned `variant` in the running experiment `key`.
    public func isInVariant(_ key: String, _ variant: String, _ client: ClientAttributes) -> Bool {
        guard let store = experiments.withLock({ $0 }), let experiment = store.current.all[key],
            experiment.status == .running
        else { return false }
        return store.variant(
            experiment, unit: client.user ?? client.device, client: client, cohorts: self, remember: false
        ).variant == variant
    }
    private let log: RecordLog?

    public init(dataDirectory: String?) throws {
        var restored: [String: Cohort] = [:]
        if let dataDirectory {
            let log = try RecordLog(directory: dataDirectory, name: "cohorts")
            try log.restore(
                snapshot: { json in
                    for entry in json["cohorts"]?.arrayValue ?? [] {
                        if let (name, cohort) = Self.decode(entry) { restored[name] = cohort }
                    }
                }, record: { json in Self.apply(json, to: &restored) })
            self.log = log
        } else {
            log = nil
        }
        cohorts.withLock { $0 = restored }
    }

    public func contains(_ name: String, _ client: ClientAttributes) -> Bool {
        if client.claimCohorts.contains(name) { return true }
        let (listed, rule): (Bool, CohortRule?) = cohorts.withLock { cohorts in
            guard let cohort = cohorts[name] else { return (false, nil) }
            return (client.user.map(cohort.users.contains) ?? false, cohort.rule)
        }
        return listed || (rule?.matches(client, cohorts: self) ?? false)
    }

    public func get(_ name: String) -> Cohort? { cohorts.withLock { $0[name] } }

    public func names() -> [(String, Int, Bool)] {
        cohorts.withLock { $0.map { ($0.key, $0.value.users.count, $0.value.rule != nil) } }.sorted { $0.0 < $1.0 }
    }

    /// Replaces (or creates) a cohort.
    public func set(_ name: String, users: Set<String>, rule: CohortRule?) throws {
        try mutate(
            .object([
                "op": .string("set"), "name": .string(name), "users": .array(users.sorted().map(JSONValue.string)),
                "rule": rule?.json ?? .null,
            ]))
    }

    /// Adds and removes users.
    public func edit(_ name: String, add: [String], remove: [String]) throws {
        try mutate(
            .object([
                "op": .string("edit"), "name": .string(name), "add": .array(add.map(JSONValue.string)),
                "remove": .array(remove.map(JSONValue.string)),
            ]))
    }

    public func delete(_ name: String) throws {
        try mutate(.object(["op": .string("delete"), "name": .string(name)]))
    }

    private func mutate(_ record: JSONValue) throws {
        try cohorts.withLock { cohorts in
            try log?.append(record) {
                var after = cohorts
                Self.apply(record, to: &after)
                return Self.snapshot(after)
            }
            Self.apply(record, to: &cohorts)
        }
    }

    static func apply(_ record: JSONValue, to cohorts: inout [String: Cohort]) {
        guard let name = record["name"]?.stringValue else { return }
        switch record["op"]?.stringValue {
        case "set":
            let users = Set((record["users"]?.arrayValue ?? []).compactMap(\.stringValue))
            let rule = record["rule"].flatMap { $0 == .null ? nil : try? CohortRule(json: $0) }
            cohorts[name] = Cohort(users: users, rule: rule)
        case "edit":
            var cohort = cohorts[name] ?? Cohort(users: [], rule: nil)
            cohorts[name] = nil  // keep the set uniquely referenced while it changes
            for user in record["add"]?.arrayValue ?? [] { if let id = user.stringValue { cohort.users.insert(id) } }
            for user in record["remove"]?.arrayValue ?? [] { if let id = user.stringValue { cohort.users.remove(id) } }
            cohorts[name] = cohort
        case "delete":
            cohorts[name] = nil
        default:
            break
        }
    }

    static func snapshot(_ cohorts: [String: Cohort]) -> JSONValue {
        .object([
            "cohorts": .array(
                cohorts.keys.sorted().map { name in
                    let cohort = cohorts[name]!
                    return .object([
                        "name": .string(name), "users": .array(cohort.users.sorted().map(JSONValue.string)),
                        "rule": cohort.rule?.json ?? .null,
                    ])
                })
        ])
    }

    static func decode(_ entry: JSONValue) -> (String, Cohort)? {
        guard let name = entry["name"]?.stringValue else { return nil }
        let users = Set((entry["users"]?.arrayValue ?? []).compactMap(\.stringValue))
        let rule = entry["rule"].flatMap { $0 == .null ? nil : try? CohortRule(json: $0) }
        return (name, Cohort(users: users, rule: rule))
    }
}
