/// What hubs scaled out over Redis tell each other over pub/sub (DESIGN §11: answers that count
/// connections cover every live hub): a query for every hub's loops, and one hub's answers.
///
/// ```
/// pushhub:gather            {"from":"<hub>","id":17,"query":{"kind":"clients","user":"u1"}}
/// pushhub:answers:<hub>     {"hub":"<hub>","id":17,"answers":[{"kind":"count","count":3}, …]}
/// ```
///
/// Invariant: `LoopQuery(json: query.json)` and `LoopAnswer(json: answer.json)` give back equal
/// values, except that a client's token claims stay on its hub (`GET /v1/clients` does not show
/// them).
enum ClusterWire {
    static let gatherChannel = "pushhub:gather"

    static func answersChannel(of hub: String) -> String { "pushhub:answers:\(hub)" }

    static func request(from hub: String, id: GatherID, query: HubQuestion) -> [UInt8] {
        JSONWriter.write(.object(["from": .string(hub), "id": .number(Double(id)), "query": query.json]))
    }

    static func answers(from hub: String, id: GatherID, _ answers: [LoopAnswer]) -> [UInt8] {
        JSONWriter.write(
            .object(["hub": .string(hub), "id": .number(Double(id)), "answers": .array(answers.map(\.json))]))
    }

    /// A request another hub published: who asks, its gather, the query. A message that does not
    /// parse (another PushHub version's) is nil, and dropped: the asking hub's gather times out.
    static func parseRequest(_ bytes: [UInt8]) -> (from: String, id: GatherID, query: HubQuestion)? {
        guard let json = try? JSONReader.parse(bytes), let from = json["from"]?.stringValue,
            let id = json["id"]?.intValue, id >= 0, let query = json["query"].flatMap(HubQuestion.init(json:))
        else { return nil }
        return (from, GatherID(id), query)
    }

    /// Another hub's answers to one of this hub's gathers (nil, and dropped, as above).
    static func parseAnswers(_ bytes: [UInt8]) -> (hub: String, id: GatherID, answers: [LoopAnswer])? {
        guard let json = try? JSONReader.parse(bytes), let hub = json["hub"]?.stringValue,
            let id = json["id"]?.intValue, id >= 0, let list = json["answers"]?.arrayValue
        else { return nil }
        return (hub, GatherID(id), list.compactMap(LoopAnswer.init(json:)))
    }
}

/// What one hub asks the others: their loops' answers to a `LoopQuery`, or (their control
/// plane's) receipts of some syncs.
enum HubQuestion {
    case loops(LoopQuery)
    case receipts(seqs: [Int])

    var json: JSONValue {
        switch self {
        case .loops(let query): query.json
        case .receipts(let seqs): .object(["kind": .string("receipts"), "seqs": .array(seqs.map { .number(Double($0)) })])
        }
    }

    init?(json: JSONValue) {
        if json["kind"]?.stringValue == "receipts" {
            guard let seqs = json["seqs"]?.arrayValue else { return nil }
            self = .receipts(seqs: seqs.compactMap(\.intValue))
        } else {
            guard let query = LoopQuery(json: json) else { return nil }
            self = .loops(query)
        }
    }
}

extension LoopQuery {
    var json: JSONValue {
        switch self {
        case .reach(let target): .object(["kind": .string("reach"), "target": target.json])
        case .renderTargets(let screen): .object(["kind": .string("render_targets"), "screen": .string(screen)])
        case .subscribers: .object(["kind": .string("subscribers")])
        case .clients(let user): .object(["kind": .string("clients"), "user": user.map(JSONValue.string) ?? .null])
        case .releaseReach(let reach):
            .object([
                "kind": .string("release_reach"), "screen": .string(reach.screen), "release": .string(reach.release),
                "qa_cohort": reach.qaCohort.map(JSONValue.string) ?? .null,
                "basis_points": .number(Double(reach.basisPoints)),
                "from_basis_points": reach.fromBasisPoints.map { .number(Double($0)) } ?? .null,
            ])
        case .clientBuilds: .object(["kind": .string("client_builds")])
        case .devicesOnline(let devices): .object(["kind": .string("devices_online"), "devices": .array(devices.map(\.json))])
        }
    }

    init?(json: JSONValue) {
        switch json["kind"]?.stringValue {
        case "reach":
            // A target this version does not read: nil, and the request is dropped (see parseRequest).
            guard let target = try? Target(json: json["target"] ?? .null) else { return nil }
            self = .reach(target)
        case "render_targets":
            guard let screen = json["screen"]?.stringValue else { return nil }
            self = .renderTargets(screen: screen)
        case "subscribers":
            self = .subscribers
        case "clients":
            self = .clients(user: json["user"]?.stringValue)
        case "client_builds":
            self = .clientBuilds
        case "devices_online":
            guard let list = json["devices"]?.arrayValue else { return nil }
            self = .devicesOnline(list.compactMap(DeviceKey.init(json:)))
        case "release_reach":
            guard let screen = json["screen"]?.stringValue, let release = json["release"]?.stringValue,
                let points = json["basis_points"]?.intValue
            else { return nil }
            self = .releaseReach(
                ReleaseReach(
                    screen: screen, release: release, qaCohort: json["qa_cohort"]?.stringValue, basisPoints: points,
                    fromBasisPoints: json["from_basis_points"]?.intValue))
        default:
            return nil
        }
    }
}

extension LoopAnswer {
    var json: JSONValue {
        switch self {
        case .published(let sent, let renditions):
            return .object([
                "kind": .string("published"), "sent": .number(Double(sent)),
                "renditions": .array(
                    renditions.map {
                        .object([
                            "patches": .array($0.patches.map(JSONValue.string)),
                            "capabilities": .number(Double($0.capabilities)),
                            "components": .array($0.components.map { .number(Double($0.rawValue)) }),
                        ])
                    }),
            ])
        case .count(let count):
            return .object(["kind": .string("count"), "count": .number(Double(count))])
        case .reach(let connections, let users):
            return .object([
                "kind": .string("reach"), "connections": .number(Double(connections)),
                "users": .array(users.sorted().map(JSONValue.string)),
            ])
        case .renderTargets(let counts):
            return .object([
                "kind": .string("render_targets"),
                "targets": .array(
                    counts.map { target, count in
                        .object([
                            "capabilities": target.capabilities.json,
                            "variants": .array(
                                target.variantPatches.map {
                                    .object([
                                        "label": .string($0.label), "experiment": .string($0.experiment),
                                        "variant": .string($0.variant), "patch": $0.patch ?? .null,
                                    ])
                                }),
                            "count": .number(Double(count)),
                        ])
                    }),
            ])
        case .subscribers(let counts):
            return .object([
                "kind": .string("subscribers"), "screens": .object(JSONObject(counts.mapValues { .number(Double($0)) })),
            ])
        case .clients(let clients):
            return .object(["kind": .string("clients"), "clients": .array(clients.map(\.json))])
        case .releaseReach(let subscribers, let exposed, let exposedBefore):
            return .object([
                "kind": .string("release_reach"), "subscribers": .number(Double(subscribers)),
                "exposed": .number(Double(exposed)), "exposed_before": .number(Double(exposedBefore)),
            ])
        case .clientBuilds(let counts):
            return .object([
                "kind": .string("client_builds"),
                // Sorted by their JSON text: the same counts always travel as the same bytes.
                "builds": .array(
                    counts.map { build, count in
                        JSONValue.object(["build": build.json, "count": .number(Double(count))])
                    }.sorted { JSONWriter.string($0) < JSONWriter.string($1) }),
            ])
        case .syncTargets(let count, let devices):
            return .object([
                "kind": .string("sync_targets"), "count": .number(Double(count)),
                "devices": .array(devices.map(\.json)),
            ])
        case .devicesOnline(let devices):
            return .object(["kind": .string("devices_online"), "devices": .array(devices.map(\.json))])
        case .receipts(let counts):
            return .object([
                "kind": .string("receipts"),
                "syncs": .array(
                    counts.sorted { $0.key < $1.key }.map { seq, receipts in
                        var members = receipts.json.objectValue ?? JSONObject()
                        members["seq"] = .number(Double(seq))
                        return .object(members)
                    }),
            ])
        }
    }

    init?(json: JSONValue) {
        func int(_ value: JSONValue?) -> Int? { value?.intValue }
        switch json["kind"]?.stringValue {
        case "published":
            guard let sent = int(json["sent"]), let list = json["renditions"]?.arrayValue else { return nil }
            var keys = Set<RenditionKey>()
            for item in list {
                guard let patches = item["patches"]?.arrayValue?.compactMap(\.stringValue),
                    let capabilities = int(item["capabilities"])
                else { return nil }
                let components = (item["components"]?.arrayValue ?? []).map {
                    ComponentJudgement(rawValue: UInt8(clamping: $0.intValue ?? 0)) ?? .passes
                }
                keys.insert(RenditionKey(patches: patches, capabilities: capabilities, components: components))
            }
            self = .published(sent: sent, renditions: keys)
        case "count":
            guard let count = int(json["count"]) else { return nil }
            self = .count(count)
        case "sync_targets":
            guard let count = int(json["count"]), let list = json["devices"]?.arrayValue else { return nil }
            self = .syncTargets(count: count, devices: list.compactMap(DeviceKey.init(json:)))
        case "devices_online":
            guard let list = json["devices"]?.arrayValue else { return nil }
            self = .devicesOnline(list.compactMap(DeviceKey.init(json:)))
        case "reach":
            guard let connections = int(json["connections"]), let users = json["users"]?.arrayValue else { return nil }
            self = .reach(connections: connections, users: Set(users.compactMap(\.stringValue)))
        case "render_targets":
            guard let list = json["targets"]?.arrayValue else { return nil }
            var counts: [RenderTarget: Int] = [:]
            for item in list {
                guard let count = int(item["count"]) else { return nil }
                var patches: [VariantPatch] = []
                for variant in item["variants"]?.arrayValue ?? [] {
                    // A hub of the version before names the label alone ("experiment@changedAt=variant";
                    // experiment keys hold no "@" and no "=").
                    guard let label = variant["label"]?.stringValue,
                        let experiment = variant["experiment"]?.stringValue
                            ?? label.split(separator: "@", maxSplits: 1).first.map(String.init),
                        let key = variant["variant"]?.stringValue
                            ?? label.split(separator: "=", maxSplits: 1).dropFirst().first.map(String.init)
                    else { return nil }
                    let patch = variant["patch"].flatMap { $0 == .null ? nil : $0 }
                    patches.append(VariantPatch(label: label, experiment: experiment, variant: key, patch: patch))
                }
                let target = RenderTarget(
                    capabilities: Capabilities(json: item["capabilities"], appVersion: item["app_version"]),
                    variantPatches: patches)
                counts[target, default: 0] &+= count  // counts from another hub: never a trap
            }
            self = .renderTargets(counts)
        case "subscribers":
            guard let screens = json["screens"]?.objectValue else { return nil }
            var counts: [String: Int] = [:]
            for (screen, value) in screens { counts[screen] = value.intValue ?? 0 }
            self = .subscribers(counts)
        case "release_reach":
            guard let subscribers = int(json["subscribers"]), let exposed = int(json["exposed"]),
                let before = int(json["exposed_before"])
            else { return nil }
            self = .releaseReach(subscribers: subscribers, exposed: exposed, exposedBefore: before)
        case "clients":
            guard let list = json["clients"]?.arrayValue else { return nil }
            self = .clients(list.compactMap(ClientAttributes.init(json:)))
        case "client_builds":
            guard let list = json["builds"]?.arrayValue else { return nil }
            var counts: [ClientBuild: Int] = [:]
            for item in list {
                guard let count = int(item["count"]), let build = ClientBuild(json: item["build"] ?? .null) else { continue }
                counts[build, default: 0] &+= count  // counts from another hub: never a trap
            }
            self = .clientBuilds(counts)
        case "receipts":
            guard let list = json["syncs"]?.arrayValue else { return nil }
            var counts: [Int: ReceiptCounts] = [:]
            for item in list {
                guard let seq = int(item["seq"]) else { return nil }
                counts[seq] = ReceiptCounts(
                    targetedOnline: int(item["targeted_online"]) ?? 0, delivered: int(item["delivered"]) ?? 0,
                    acked: int(item["acked"]) ?? 0, pushed: int(item["pushed"]) ?? 0,
                    pushFailed: int(item["push_failed"]) ?? 0)
            }
            self = .receipts(counts)
        default:
            return nil
        }
    }
}

extension ClientAttributes {
    /// A client as another hub listed it (`json`); its token claims stayed on that hub.
    init?(json: JSONValue) {
        guard let session = json["session"]?.stringValue, let device = json["device"]?.stringValue,
            let connectedAt = json["connected_at"]?.intValue
        else { return nil }
        self.init(
            session: session, user: json["user"]?.stringValue, device: device, platform: json["platform"]?.stringValue,
            appVersion: json["app_version"]?.stringValue.flatMap(SemanticVersion.init),
            claimCohorts: json["claim_cohorts"]?.arrayValue?.compactMap(\.stringValue) ?? [], claims: [:],
            connectedAt: connectedAt, components: json["components"].flatMap { try? DeclaredComponents(json: $0) })
        // try?: a listing from another hub is shown as given; a declaration it accepted parses here.
    }
}

extension Capabilities {
    /// `{"app_version":…,"limits":{…}}`: what another hub's client renders.
    var json: JSONValue {
        .object([
            "app_version": appVersion.map { .string($0.description) } ?? .null,
            "limits": .object(JSONObject(limits.mapValues { .number(Double($0)) })),
        ])
    }

    /// From `json` (a hub before components sent `app_version` alone, beside the variants).
    convenience init(json: JSONValue?, appVersion legacy: JSONValue?) {
        var limits: [String: Int] = [:]
        for (name, value) in json?["limits"]?.objectValue ?? [:] { limits[name] = value.intValue ?? 0 }
        let version = (json?["app_version"] ?? legacy)?.stringValue.flatMap(SemanticVersion.init)
        self.init(appVersion: version, limits: limits)
    }
}
