/// `/v1/experiments…` (DESIGN §6, §7): define, list, show, delete; assignment lookups (one or
/// many units); exposure results.
struct ExperimentRoutes {
    let plane: ControlPlane
    let reply: AdminReply

    /// An experiment key: `[a-z0-9._-]{1,100}`.
    static func validationError(_ key: String) -> String? { Identifier.validationError(key, kind: "an experiment key") }

    func list() {
        plane.afterCommit { [plane, reply] in
            let entries = plane.state.view.experiments.all.values.sorted { $0.key < $1.key }.map {
                experiment -> JSONValue in
                .object([
                    "key": .string(experiment.key), "status": .string(experiment.status.rawValue),
                    "variants": .array(experiment.variants.map { .string($0.key) }),
                    "screens": .array(experiment.screens.keys.sorted().map(JSONValue.string)),
                ])
            }
            reply.json(200, .object(["experiments": .array(entries)]))
        }
    }

    /// The experiment `key` as of the durable state, or a 404.
    private func withExperiment(_ key: String, _ body: @escaping (Experiment) -> Void) {
        plane.afterCommit { [plane, reply] in
            guard let experiment = plane.state.view.experiments.all[key] else {
                return reply.error(.notFound("no experiment \(key)"))
            }
            body(experiment)
        }
    }

    func handle(_ head: RequestHead, path: String, body: [UInt8]) throws(AdminError) {
        let parts = path.split(separator: "/", maxSplits: 1).map(String.init)
        let key = parts.first ?? ""
        if let problem = Self.validationError(key) { throw AdminError(422, "invalid_experiment_key", problem) }
        let sub = parts.count > 1 ? parts[1] : ""
        switch (head.method, sub) {
        case ("PUT", ""): try put(key, body)
        case ("GET", ""): withExperiment(key) { [reply] in reply.json(200, $0.json) }
        case ("DELETE", ""):
            guard plane.state.view.experiments.all[key] != nil else { throw AdminError.notFound("no experiment \(key)") }
            plane.commit([.experimentDeleted(key)], reply: reply) { _ in
                .object(["key": .string(key), "deleted": .bool(true)])
            }
        case ("POST", "status"):
            try amend(key, body, field: "status", shape: "{\"status\": \"draft\" | \"running\" | \"stopped\"}") {
                $0.stringValue != nil
            }
        case ("POST", "traffic"):
            try amend(key, body, field: "traffic", shape: "{\"traffic\": a number from 0 to 1}") { $0.numberValue != nil }
        case ("GET", "assignment"): try assignment(key, head)
        case ("GET", "results"): withExperiment(key) { results($0) }
        default:
            switch sub {
            case "": throw AdminError.methodNotAllowed(head, accepts: ["GET", "PUT", "DELETE"])
            case "status", "traffic": throw AdminError.methodNotAllowed(head, accepts: ["POST"])
            case "assignment", "results": throw AdminError.methodNotAllowed(head, accepts: ["GET"])
            default: throw AdminError.notFound("no admin route \(head.method) \(head.path)")
            }
        }
    }

    /// Validates and stores a definition. The layer check and the store are one step on the
    /// control plane (`state` includes every mutation accepted before, durable or not), so two
    /// overlapping ranges can never both be accepted.
    private func put(_ key: String, _ body: [UInt8]) throws(AdminError) {
        try store(key, try AdminBody.json(body))
    }

    /// `POST …/status {"status":"running"}` and `POST …/traffic {"traffic":0.8}`: the stored
    /// definition with one field changed, checked and stored like a PUT in the same step (a
    /// read-modify-write by a client could lose a change made in between).
    private func amend(_ key: String, _ body: [UInt8], field: String, shape: String, accepts: (JSONValue) -> Bool)
        throws(AdminError)
    {
        let request = try AdminBody.object(body, known: [field], shape: shape)
        guard let value = request[field], accepts(value) else { throw AdminError(400, "bad_request", "send \(shape)") }
        guard case .object(var definition)? = plane.state.view.experiments.all[key]?.json else {
            throw AdminError.notFound("no experiment \(key)")
        }
        definition[field] = value
        try store(key, .object(definition))
    }

    private func store(_ key: String, _ json: JSONValue) throws(AdminError) {
        let experiment = try Experiment(key: key, json: json)
        let set = plane.state.view.experiments
        if let layer = experiment.layer, let range = experiment.layerRange {
            for other in set.all.values where other.key != key && other.layer == layer && other.status != .stopped {
                if let theirs = other.layerRange, theirs.overlaps(range) {
                    throw AdminError(
                        422, "invalid_experiment",
                        "layer_range: [\(range.lowerBound), \(range.upperBound)) overlaps \(other.key)'s [\(theirs.lowerBound), \(theirs.upperBound)) in layer \(layer)"
                    )
                }
            }
        }
        let screens = Set(experiment.screens.keys).union(set.all[key]?.screens.keys.map { $0 } ?? [])
        plane.commit([.experimentPut(experiment)], reply: reply) { _ in
            .object([
                "key": .string(key), "status": .string(experiment.status.rawValue),
                "screens": .array(screens.sorted().map(JSONValue.string)),
            ])
        }
    }

    /// `?unit=U[&unit=…][&platform=P&app_version=V]` → the variant of each unit, with the reason.
    private func assignment(_ key: String, _ head: RequestHead) throws(AdminError) {
        let query = head.query
        let units = query.filter { $0.name == "unit" }.map(\.value)
        guard !units.isEmpty else {
            throw AdminError(400, "bad_request", "give the unit: ?unit=U (repeat it for several)")
        }
        let platform = query.first { $0.name == "platform" }?.value
        let versionText = query.first { $0.name == "app_version" }?.value
        var appVersion: SemanticVersion?
        if let versionText {
            guard let parsed = SemanticVersion(versionText) else {
                throw AdminError(400, "bad_app_version", "app_version \"\(versionText)\" is not a semantic version")
            }
            appVersion = parsed
        }
        withExperiment(key) { [plane, reply] experiment in
        let view = plane.state.view
        let answers = units.map { unit -> JSONValue in
            let client = ClientAttributes(
                session: "", user: unit, device: unit, platform: platform, appVersion: appVersion,
                claimCohorts: [], claims: JSONObject(), connectedAt: 0)
            let outcome = view.assignment(experiment, unit: unit, client: client)
            return .object([
                "unit": .string(unit), "variant": outcome.variant.map(JSONValue.string) ?? .null,
                "reason": .string(outcome.reason),
            ])
        }
        if answers.count == 1, case .object(var only) = answers[0] {
            only["unit"] = nil
            return reply.json(200, .object(only))
        }
        reply.json(200, .object(["assignments": .array(answers)]))
        }
    }

    private func results(_ experiment: Experiment) {
        let key = experiment.key
        let counts = plane.exposures.results(key)
        let variants = experiment.variants.map { variant -> JSONValue in
            let count = counts[variant.key] ?? (0, 0)
            return .object([
                "variant": .string(variant.key), "served": .number(Double(count.served)),
                "confirmed": .number(Double(count.confirmed)),
            ])
        }
        reply.json(
            200,
            .object(["key": .string(key), "status": .string(experiment.status.rawValue), "variants": .array(variants)]))
    }
}
