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
                "etag": .string(experiment.etag),
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

    /// `GET /v1/experiments/{key}`: the definition as submitted, its `ETag` in the header.
    func get() throws(AdminError) {
        let experiment = try experiment()
        var response = Response.json(200, JSONWriter.string(experiment.json))
        response.headers.append(name: "ETag", value: "\"\(experiment.etag)\"")
        reply(response)
    }

    /// `PUT /v1/experiments/{key}`: creates or replaces the definition; with `If-Match`, only
    /// the one the caller read. With `?dry_run=true` it is checked as a change would be and
    /// answered with its preview (`preview`), and not stored.
    func put() throws(AdminError) {
        try checkIfMatch()
        let json = try AdminBody.json(call.body)
        guard call.changes else { return reply.json(200, previewAnswer(try validated(json))) }
        try store(json)
    }

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
        var definition = try storedDefinition()
        definition[field] = value
        try store(.object(definition))
    }

    /// `POST /v1/experiments/{key}/overrides {"unit": U, "variant": V}` puts one unit in a variant
    /// (`"variant": null` takes it out again), leaving the rest of the definition as it is.
    func setOverride() throws(AdminError) {
        let shape = "{\"unit\": \"u17\", \"variant\": \"a variant key\" | null}"
        let request = try AdminBody.object(call.body, known: ["unit", "variant"], shape: shape)
        guard let unit = request["unit"]?.stringValue, !unit.isEmpty, let variant = request["variant"],
            variant == .null || variant.stringValue != nil
        else { throw AdminError(400, "bad_request", "send \(shape)") }
        var definition = try storedDefinition()
        var overrides = definition["overrides"]?.objectValue ?? JSONObject()
        let wanted = variant == .null ? nil : variant
        guard overrides[unit] != wanted else {
            // Already so: nothing changes (a new ETag would make every open form stale). The answer
            // waits for what was changed before it, like any change.
            let etag = call.state.view.experiments.all[key]?.etag ?? ""
            return call.commit([]) { [key] _ in
                .object([
                    "key": .string(key), "unit": .string(unit), "variant": variant, "unchanged": .bool(true),
                    "etag": .string(etag),
                ])
            }
        }
        overrides[unit] = wanted
        definition["overrides"] = .object(overrides)
        try store(.object(definition), answering: ["unit": .string(unit), "variant": variant])
    }

    /// The stored definition, once `If-Match` (when sent) names it.
    private func storedDefinition() throws(AdminError) -> JSONObject {
        try checkIfMatch()
        guard case .object(let definition)? = call.state.view.experiments.all[key]?.json else {
            throw AdminError.notFound("no experiment \(key)")
        }
        return definition
    }

    /// `If-Match` (RFC 9110 §13.1.1): the change is made only to the definition the caller read
    /// (`*`: to any existing one); `If-None-Match: *` (§13.1.2): only when there is none (a
    /// create that must not replace one made meanwhile); 412 otherwise. Made again after a lost
    /// race, the check sees the newer definition.
    private func checkIfMatch() throws(AdminError) {
        let current = call.state.view.experiments.all[key]
        if call.head.headers["If-None-Match"]?.trimmingHTTPWhitespace() == "*", current != nil {
            throw AdminError(412, "stale_definition", "\(key) exists already (If-None-Match: *): read it and edit it")
        }
        guard let header = call.head.headers["If-Match"] else { return }
        // Strong comparison (RFC 9110 §13.1.1): a weak tag (`W/"…"`) never matches.
        let tags = header.split(separator: ",").map { tag in
            let tag = tag.trimmingHTTPWhitespace()
            return tag.hasPrefix("W/") ? tag : tag.trimming { $0 == "\"" }
        }
        if tags == ["*"] {
            guard current != nil else {
                throw AdminError(412, "stale_definition", "\(key) does not exist (If-Match: *)")
            }
            return
        }
        guard let current else {
            throw AdminError(412, "stale_definition", "\(key) was deleted since you read it")
        }
        guard tags.contains(current.etag) else {
            throw AdminError(
                412, "stale_definition", "\(key) changed since you read it (now \"\(current.etag)\"): read it again")
        }
    }

    /// Validates and stores a definition. The layer check and the store are one step on the
    /// control plane (`state` includes every mutation accepted before, durable or not), so two
    /// overlapping ranges can never both be accepted.
    private func store(_ json: JSONValue, answering extra: JSONObject = JSONObject()) throws(AdminError) {
        let experiment = try validated(json)
        let set = call.state.view.experiments
        let screens = Set(experiment.screens.keys).union(set.all[key]?.screens.keys.map { $0 } ?? [])
        call.commit([.experimentPut(experiment)]) { [key] _ in
            var answer = extra
            answer["key"] = .string(key)
            answer["status"] = .string(experiment.status.rawValue)
            answer["screens"] = .array(screens.sorted().map(JSONValue.string))
            answer["etag"] = .string(experiment.etag)
            return .object(answer)
        }
    }

    /// The definition checked as a change is, a dry run's too: its fields, its layer range against
    /// the other experiments of the layer, its variant patches against the screens.
    private func validated(_ json: JSONValue) throws(AdminError) -> Experiment {
        let experiment = try Experiment(key: key, json: json)
        try checkVariantPatches(experiment)
        try ComponentCheck(call: call).check(variantsOf: experiment)
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
        return experiment
    }

    /// Every variant patch against its screen's current tree (docs/assignment.md "Variant
    /// patches"): a key or id the tree lacks, not marked as an addition, is a 422 listing every
    /// such problem. A screen not published yet is not checked.
    private func checkVariantPatches(_ experiment: Experiment) throws(AdminError) {
        var problems: [JSONValue] = []
        var first: String?
        for screen in experiment.screens.keys.sorted() {
            guard let base = call.state.view.current(screen) else { continue }
            for (variant, patch) in experiment.screens[screen]!.sorted(by: { $0.key < $1.key }) {
                for problem in VariantPatch.problems(in: patch, against: base.tree) {
                    let path = JSONPointer().appending("screens").appending(screen).appending(variant).description
                        + problem.path
                    first = first ?? "\(path): \(problem.message)"
                    problems.append(.object(["path": .string(path), "message": .string(problem.message)]))
                }
            }
        }
        guard let first else { return }
        var error = AdminError(
            422, "invalid_variant_patch",
            problems.count == 1 ? first : "\(first) (and \(problems.count - 1) more problems: see problems)")
        error.details = ["problems": .array(problems)]
        throw error
    }

    /// `GET /v1/experiments/{key}/preview[?screen=S]`: each screen the experiment changes, as an
    /// up-to-date client in each variant sees it now (this experiment's patch on the current
    /// base; other experiments left out).
    func preview() throws(AdminError) { reply.json(200, previewAnswer(try experiment())) }

    private func previewAnswer(_ experiment: Experiment) -> JSONValue {
        let only = call.query("screen")
        let view = call.state.view
        let screens = experiment.screens.keys.sorted().filter { only == nil || $0 == only }.map { screen -> JSONValue in
            guard let current = view.current(screen) else {
                return .object(["screen": .string(screen), "version": .null, "variants": .array([])])
            }
            let variants = experiment.variants.map { variant -> JSONValue in
                let tree = experiment.screens[screen]?[variant.key].map { VariantPatch.apply($0, to: current.tree) }
                let rendered = RenderedTree(Rendition.render(tree ?? current.tree, for: view.latestTarget))
                return .object([
                    "variant": .string(variant.key), "hash": .string(rendered.hash), "tree": rendered.tree,
                ])
            }
            return .object([
                "screen": .string(screen), "version": .number(Double(current.version)), "variants": .array(variants),
            ])
        }
        return .object(["key": .string(key), "screens": .array(screens)])
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

    /// `GET /v1/experiments/{key}/results`: the current phase's results, once the tally holds
    /// every event recorded before the request (scaled out: read back from Redis).
    func results() throws(AdminError) {
        let experiment = try experiment()
        plane.results.whenCurrent(now: MonotonicClock.now()) { [plane, reply] failure in
            var report = ResultsReport.json(
                experiment,
                phase: plane.results.tally.phase(experiment: experiment.key, salt: experiment.salt),
                kept: plane.results.log.kept)
            if let failure, case .object(var members) = report {
                members["warning"] = .string(failure)
                report = .object(members)
            }
            reply.json(200, report)
        }
    }
}
