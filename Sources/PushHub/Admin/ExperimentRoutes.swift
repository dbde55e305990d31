/// `/v1/experiments…` (DESIGN §6, §7): define, list, show, delete; assignment lookups (one or
/// many units); exposure results.
struct ExperimentRoutes: AdminHandlers {
    let call: AdminCall

    init(_ call: AdminCall) { self.call = call }

    /// The experiment the path names (`/v1/experiments/{key}…`).
    private var key: String { call.variable }

    /// An experiment key: `[a-z0-9._-]{1,100}`.
    static func validationError(_ key: String) -> String? { Identifier.validationError(key, kind: "an experiment key") }

    func list() {
        let entries = call.state.view.experiments.all.values.sorted { $0.key < $1.key }.map {
            experiment -> JSONValue in
            .object([
                "key": .string(experiment.key), "status": .string(experiment.status.rawValue),
                "variants": .array(experiment.variants.map { .string($0.key) }),
                "screens": .array(experiment.screens.keys.sorted().map(JSONValue.string)),
            ])
        }
        reply.json(200, .object(["experiments": .array(entries)]))
    }

    /// The experiment the path names, or a 404.
    private func experiment() throws(AdminError) -> Experiment {
        guard let experiment = call.state.view.experiments.all[key] else {
            throw AdminError.notFound("no experiment \(key)")
        }
        return experiment
    }

    /// `GET /v1/experiments/{key}`: the definition as submitted.
    func get() throws(AdminError) { reply.json(200, try experiment().json) }

    func put() throws(AdminError) { try store(try AdminBody.json(call.body)) }

    func delete() throws(AdminError) {
        guard call.state.view.experiments.all[key] != nil else { throw AdminError.notFound("no experiment \(key)") }
        call.commit([.experimentDeleted(key)]) { [key] _ in .object(["key": .string(key), "deleted": .bool(true)]) }
    }

    /// `POST /v1/experiments/{key}/status {"status": "running"}` (`hubctl experiment start|stop`).
    func setStatus() throws(AdminError) {
        try amend(field: "status", shape: "{\"status\": \"draft\" | \"running\" | \"stopped\"}") {
            $0.stringValue != nil
        }
    }

    /// `POST /v1/experiments/{key}/traffic {"traffic": 0.8}` (the console's ramp).
    func setTraffic() throws(AdminError) {
        try amend(field: "traffic", shape: "{\"traffic\": a number from 0 to 1}") { $0.numberValue != nil }
    }

    /// The stored definition with one field changed, checked and stored like a PUT in the same
    /// step (a read-modify-write by a client could lose a change made in between).
    private func amend(field: String, shape: String, accepts: (JSONValue) -> Bool) throws(AdminError) {
        let request = try AdminBody.object(call.body, known: [field], shape: shape)
        guard let value = request[field], accepts(value) else { throw AdminError(400, "bad_request", "send \(shape)") }
        guard case .object(var definition)? = call.state.view.experiments.all[key]?.json else {
            throw AdminError.notFound("no experiment \(key)")
        }
        definition[field] = value
        try store(.object(definition))
    }

    /// Validates and stores a definition. The layer check and the store are one step on the
    /// control plane (`state` includes every mutation accepted before, durable or not), so two
    /// overlapping ranges can never both be accepted.
    private func store(_ json: JSONValue) throws(AdminError) {
        let experiment = try Experiment(key: key, json: json)
        let set = call.state.view.experiments
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
        call.commit([.experimentPut(experiment)]) { [key] _ in
            .object([
                "key": .string(key), "status": .string(experiment.status.rawValue),
                "screens": .array(screens.sorted().map(JSONValue.string)),
            ])
        }
    }

    /// `GET /v1/experiments/{key}/assignment?unit=U[&unit=…][&platform=P&app_version=V]`: the
    /// variant of each unit, with the reason.
    func assignment() throws(AdminError) {
        let query = call.head.query
        let units = query.filter { $0.name == "unit" }.map(\.value)
        guard !units.isEmpty else {
            throw AdminError(400, "bad_request", "give the unit: ?unit=U (repeat it for several)")
        }
        let platform = call.query("platform")
        var appVersion: SemanticVersion?
        if let versionText = call.query("app_version") {
            guard let parsed = SemanticVersion(versionText) else {
                throw AdminError(400, "bad_app_version", "app_version \"\(versionText)\" is not a semantic version")
            }
            appVersion = parsed
        }
        let experiment = try experiment()
        let view = call.state.view
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

    /// `GET /v1/experiments/{key}/results`: exposures (served, confirmed) per variant.
    func results() throws(AdminError) {
        let experiment = try experiment()
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
