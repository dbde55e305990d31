/// One durable change of hub state, as the journal holds it (DESIGN §9 "Durability"). Every
/// mutation the control plane makes is one of these; restoring applies them in order.
///
/// Invariant: `HubRecord(json: record.json)` restores an equal record; a record that does not
/// decode is an error naming what is wrong (restoring stops there, it never skips a record).
enum HubRecord: Sendable {
    case screenPublished(ScreenVersion)
    case screenDeleted(String)
    /// Snapshots only: the last version number of a deleted screen (numbers are never reused).
    case screenNumbered(String, lastVersion: Int)
    case cohortSet(String, Cohort)
    case cohortUsersEdited(String, add: [String], remove: [String])
    /// The rule alone (nil removes it); the listed users stay.
    case cohortRuleSet(String, CohortRule?)
    case cohortDeleted(String)
    case experimentPut(Experiment)
    case experimentDeleted(String)
    case stickyAssigned(experiment: String, unit: String, variant: String)
    case syncAppended(Sync)
    /// Snapshots only: the last sync seq given out, when the syncs themselves have expired.
    case syncNumbered(Int)
    case adminTokenCreated(AdminToken)
    case adminTokenRevoked(String)
    /// A release as it is (DESIGN §15): written when it starts, and in snapshots for every kept one.
    case releasePut(Release)
    /// A step of a rolling release: a percent raised, promoted, or halted.
    case releaseStepped(screen: String, release: String, Release.Step)
    /// A component registered (DESIGN §16), replacing any of that name, at a time in milliseconds.
    case componentPut(Component, at: Int)
    case componentDeleted(String)
    /// An app profile registered, replacing any at its platform and version.
    case appProfilePut(AppProfile)
    case appProfileDeleted(platform: String, appVersion: SemanticVersion)
    /// A device's push registration (DESIGN §17), replacing any it had.
    case pushDeviceSet(PushDevice)
    /// A device's registration removed: with `token`, only while that is still its token.
    case pushDeviceRemoved(DeviceKey, token: String?)
    /// Webhooks, their events and deliveries (DESIGN §18).
    case webhook(WebhookRecord)

    /// Why a stored record cannot be restored.
    struct DecodingError: Error, CustomStringConvertible {
        var description: String
    }

    var json: JSONValue {
        switch self {
        case .screenPublished(let version):
            // author, message and rollback_of only when set: a record without them is what a hub
            // before them wrote, and decodes the same.
            var members: JSONObject = [
                "kind": .string("screen_published"), "screen": .string(version.name),
                "version": .number(Double(version.version)), "at": .number(Double(version.publishedAt)),
                "tree": version.tree,
            ]
            if let author = version.author { members["author"] = .string(author) }
            if let message = version.message { members["message"] = .string(message) }
            if let rollbackOf = version.rollbackOf { members["rollback_of"] = .number(Double(rollbackOf)) }
            return .object(members)
        case .screenDeleted(let name):
            return .object(["kind": .string("screen_deleted"), "screen": .string(name)])
        case .screenNumbered(let name, let last):
            return .object([
                "kind": .string("screen_numbered"), "screen": .string(name), "last_version": .number(Double(last)),
            ])
        case .cohortSet(let name, let cohort):
            return .object([
                "kind": .string("cohort_set"), "name": .string(name),
                "users": .array(cohort.users.sorted().map(JSONValue.string)), "rule": cohort.rule?.json ?? .null,
            ])
        case .cohortUsersEdited(let name, let add, let remove):
            return .object([
                "kind": .string("cohort_users_edited"), "name": .string(name),
                "add": .array(add.map(JSONValue.string)), "remove": .array(remove.map(JSONValue.string)),
            ])
        case .cohortRuleSet(let name, let rule):
            return .object(["kind": .string("cohort_rule_set"), "name": .string(name), "rule": rule?.json ?? .null])
        case .cohortDeleted(let name):
            return .object(["kind": .string("cohort_deleted"), "name": .string(name)])
        case .experimentPut(let experiment):
            return .object([
                "kind": .string("experiment_put"), "key": .string(experiment.key), "definition": experiment.json,
            ])
        case .experimentDeleted(let key):
            return .object(["kind": .string("experiment_deleted"), "key": .string(key)])
        case .stickyAssigned(let experiment, let unit, let variant):
            return .object([
                "kind": .string("sticky_assigned"), "experiment": .string(experiment), "unit": .string(unit),
                "variant": .string(variant),
            ])
        case .syncAppended(let sync):
            var members = sync.json.objectValue ?? JSONObject()
            members["kind"] = .string("sync_appended")
            return .object(members)
        case .syncNumbered(let seq):
            return .object(["kind": .string("sync_numbered"), "last_seq": .number(Double(seq))])
        case .adminTokenCreated(let token):
            return .object([
                "kind": .string("admin_token_created"), "name": .string(token.name),
                "scopes": .array(token.scopes.sorted().map { .string($0.rawValue) }), "digest": .string(token.digest),
                "at": .number(Double(token.createdAt)),
            ])
        case .adminTokenRevoked(let name):
            return .object(["kind": .string("admin_token_revoked"), "name": .string(name)])
        case .releasePut(let release):
            var members = release.recordJSON
            members["kind"] = .string("release_put")
            return .object(members)
        case .releaseStepped(let screen, let release, let step):
            return .object([
                "kind": .string("release_step"), "screen": .string(screen), "release": .string(release),
                "step": .object(step.json),
            ])
        case .componentPut(let component, let time):
            var members = component.json.objectValue ?? JSONObject()
            members["kind"] = .string("component_put")
            members["at"] = .number(Double(time))
            return .object(members)
        case .componentDeleted(let name):
            return .object(["kind": .string("component_deleted"), "name": .string(name)])
        case .appProfilePut(let profile):
            var members = profile.json.objectValue ?? JSONObject()
            members["kind"] = .string("app_profile_put")
            return .object(members)
        case .appProfileDeleted(let platform, let appVersion):
            return .object([
                "kind": .string("app_profile_deleted"), "platform": .string(platform),
                "app_version": .string(appVersion.description),
            ])
        case .pushDeviceSet(let device):
            return .object([
                "kind": .string("push_device_set"), "user": device.user.map(JSONValue.string) ?? .null,
                "device": .string(device.device), "provider": .string(device.provider.rawValue),
                "token": .string(device.token), "topic": device.topic.map(JSONValue.string) ?? .null,
                "platform": device.platform.map(JSONValue.string) ?? .null,
                "app_version": device.appVersion.map { .string($0.description) } ?? .null,
                "claim_cohorts": .array(device.claimCohorts.map(JSONValue.string)), "claims": .object(device.claims),
                "at": .number(Double(device.updatedAt)),
            ])
        case .pushDeviceRemoved(let key, let token):
            return .object([
                "kind": .string("push_device_removed"), "user": key.user.map(JSONValue.string) ?? .null,
                "device": .string(key.device), "token": token.map(JSONValue.string) ?? .null,
            ])
        case .webhook(let record):
            return record.json
        }
    }

    init(json: JSONValue) throws(DecodingError) {
        let fields = Fields(json: json)
        let kind = try fields.string("kind")
        switch kind {
        case "screen_published":
            guard let tree = json["tree"] else { throw DecodingError(description: "screen_published has no tree") }
            self = .screenPublished(
                ScreenVersion(
                    name: try fields.string("screen"), version: try fields.int("version"), tree: tree,
                    publishedAt: try fields.int("at"), author: try fields.optionalString("author"),
                    message: try fields.optionalString("message"), rollbackOf: try fields.optionalInt("rollback_of")))
        case "screen_deleted":
            self = .screenDeleted(try fields.string("screen"))
        case "screen_numbered":
            self = .screenNumbered(try fields.string("screen"), lastVersion: try fields.int("last_version"))
        case "cohort_set":
            let rule = try Self.rule(json["rule"], in: kind)
            self = .cohortSet(try fields.string("name"), Cohort(users: Set(try fields.strings("users")), rule: rule))
        case "cohort_rule_set":
            self = .cohortRuleSet(try fields.string("name"), try Self.rule(json["rule"], in: kind))
        case "cohort_users_edited":
            self = .cohortUsersEdited(
                try fields.string("name"), add: try fields.strings("add"), remove: try fields.strings("remove"))
        case "cohort_deleted":
            self = .cohortDeleted(try fields.string("name"))
        case "experiment_put":
            let key = try fields.string("key")
            do {
                self = .experimentPut(try Experiment(key: key, json: json["definition"] ?? .null))
            } catch {
                throw DecodingError(description: "experiment_put \(key) no longer validates: \(error.message)")
            }
        case "experiment_deleted":
            self = .experimentDeleted(try fields.string("key"))
        case "sticky_assigned":
            self = .stickyAssigned(
                experiment: try fields.string("experiment"), unit: try fields.string("unit"),
                variant: try fields.string("variant"))
        case "sync_appended":
            let target: Target
            do {
                target = try Target(json: json["target"] ?? .null)
            } catch {
                throw DecodingError(description: "sync_appended: the target no longer parses: \(error.message)")
            }
            let hint = json["hint"].flatMap { $0 == .null ? nil : $0 }
            let push = try fields.optionalString("push").map { text throws(DecodingError) -> PushMode in
                guard let mode = PushMode(rawValue: text) else {
                    throw DecodingError(description: "sync_appended: unknown push mode \"\(text)\"")
                }
                return mode
            }
            self = .syncAppended(
                Sync(
                    seq: try fields.int("seq"), target: target, reason: try fields.string("reason"),
                    scope: try fields.string("scope"), hint: hint, collapse: json["collapse"]?.stringValue,
                    mandatory: json["mandatory"] == .bool(true), createdAt: try fields.int("created_at"),
                    expiresAt: try fields.int("expires_at"), spreadMilliseconds: try fields.int("spread_ms"),
                    jitterMilliseconds: try fields.int("jitter_ms"), push: push ?? .none))
        case "sync_numbered":
            self = .syncNumbered(try fields.int("last_seq"))
        case "admin_token_created":
            var scopes = Set<AdminScope>()
            for text in try fields.strings("scopes") {
                guard let scope = AdminScope(rawValue: text) else {
                    throw DecodingError(description: "admin_token_created: unknown scope \"\(text)\"")
                }
                scopes.insert(scope)
            }
            self = .adminTokenCreated(
                AdminToken(
                    name: try fields.string("name"), scopes: scopes, digest: try fields.string("digest"),
                    createdAt: try fields.int("at")))
        case "admin_token_revoked":
            self = .adminTokenRevoked(try fields.string("name"))
        case "release_put":
            self = .releasePut(try Release(recordJSON: json))
        case "release_step":
            self = .releaseStepped(
                screen: try fields.string("screen"), release: try fields.string("release"),
                try Release.Step(json: json["step"] ?? .null))
        case "component_put":
            let name = try fields.string("name")
            let component: Component
            do {
                component = try Component(name: name, body: .object(["versions": json["versions"] ?? .null]))
            } catch {
                throw DecodingError(description: "component_put \(name) no longer validates: \(error.message)")
            }
            self = .componentPut(component, at: try fields.int("at"))
        case "component_deleted":
            self = .componentDeleted(try fields.string("name"))
        case "app_profile_put":
            let components: DeclaredComponents
            do {
                components = try DeclaredComponents(json: json["components"] ?? .null)
            } catch {
                throw DecodingError(description: "app_profile_put: the components no longer parse: \(error.message)")
            }
            self = .appProfilePut(
                AppProfile(
                    platform: try fields.string("platform"), appVersion: try fields.semanticVersion("app_version"),
                    components: components, updatedAt: try fields.int("updated_at")))
        case "app_profile_deleted":
            self = .appProfileDeleted(
                platform: try fields.string("platform"), appVersion: try fields.semanticVersion("app_version"))
        case "push_device_set":
            guard let provider = PushProvider(rawValue: try fields.string("provider")) else {
                throw DecodingError(description: "push_device_set: unknown provider")
            }
            var appVersion: SemanticVersion?
            if let text = try fields.optionalString("app_version") {
                guard let version = SemanticVersion(text) else {
                    throw DecodingError(description: "push_device_set: \"app_version\" is not a semantic version")
                }
                appVersion = version
            }
            guard case .object(let claims)? = json["claims"] else {
                throw DecodingError(description: "\"claims\" is missing or not an object")
            }
            self = .pushDeviceSet(
                PushDevice(
                    user: try fields.optionalString("user"), device: try fields.string("device"), provider: provider,
                    token: try fields.string("token"), topic: try fields.optionalString("topic"),
                    platform: try fields.optionalString("platform"), appVersion: appVersion,
                    claimCohorts: try fields.strings("claim_cohorts"), claims: claims, updatedAt: try fields.int("at")))
        case "push_device_removed":
            self = .pushDeviceRemoved(
                DeviceKey(user: try fields.optionalString("user"), device: try fields.string("device")),
                token: try fields.optionalString("token"))
        case _ where WebhookRecord.kinds.contains(kind):
            self = .webhook(try WebhookRecord(kind: kind, json: json))
        default:
            throw DecodingError(description: "unknown record kind \"\(kind)\"")
        }
    }

    /// A cohort rule as stored (null: none); one that no longer parses stops the restore, named.
    private static func rule(_ value: JSONValue?, in kind: String) throws(DecodingError) -> CohortRule? {
        guard let value, value != .null else { return nil }
        do {
            return try CohortRule(json: value)
        } catch {
            throw DecodingError(description: "\(kind): the rule no longer parses: \(error.message)")
        }
    }

    /// Reads required fields of a record, naming the one that is missing or of the wrong type.
    private struct Fields {
        let json: JSONValue

        func string(_ name: String) throws(DecodingError) -> String {
            guard let value = json[name]?.stringValue else { throw missing(name, "a string") }
            return value
        }

        func int(_ name: String) throws(DecodingError) -> Int {
            guard let value = json[name]?.intValue else { throw missing(name, "an integer") }
            return value
        }

        /// A field that may be absent (or null): nil then; present, it must have the type.
        func optionalString(_ name: String) throws(DecodingError) -> String? {
            guard let value = json[name], value != .null else { return nil }
            guard let text = value.stringValue else { throw missing(name, "a string") }
            return text
        }

        func semanticVersion(_ name: String) throws(DecodingError) -> SemanticVersion {
            guard let version = json[name]?.stringValue.flatMap(SemanticVersion.init) else {
                throw missing(name, "a semantic version")
            }
            return version
        }

        func optionalInt(_ name: String) throws(DecodingError) -> Int? {
            guard let value = json[name], value != .null else { return nil }
            guard let number = value.intValue else { throw missing(name, "an integer") }
            return number
        }

        func strings(_ name: String) throws(DecodingError) -> [String] {
            guard let list = json[name]?.arrayValue else { throw missing(name, "an array of strings") }
            var values: [String] = []
            values.reserveCapacity(list.count)
            for element in list {
                guard let value = element.stringValue else { throw missing(name, "an array of strings") }
                values.append(value)
            }
            return values
        }

        private func missing(_ name: String, _ type: String) -> DecodingError {
            DecodingError(description: "\"\(name)\" is missing or not \(type)")
        }
    }
}

extension HubRecord {
    /// The JSON of a stored record's payload; one that is not JSON is corruption at `offset` of `path`.
    static func storedJSON(_ payload: [UInt8], path: String, offset: Int) throws(Journal.Corruption) -> JSONValue {
        do {
            return try JSONReader.parse(payload, maxDepth: 10_000)
        } catch {
            throw Journal.Corruption(path: path, offset: offset, reason: "a record is not JSON: \(error)")
        }
    }

    /// A stored record; one that no longer decodes is corruption at `offset` of `path`.
    init(stored json: JSONValue, path: String, offset: Int) throws(Journal.Corruption) {
        do {
            self = try HubRecord(json: json)
        } catch {
            throw Journal.Corruption(path: path, offset: offset, reason: error.description)
        }
    }
}
