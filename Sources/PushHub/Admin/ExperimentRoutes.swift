/// `/v1/experiments…` (DESIGN §6, §7): define, list, show, delete; assignment lookups (one or
/// many units); exposure results.
struct ExperimentRoutes {
    let services: HubServices

    /// An experiment key: `[a-z0-9._-]{1,100}`.
    static func validationError(_ key: String) -> String? { Identifier.validationError(key, kind: "an experiment key") }

    func list() -> Response {
        let entries = services.experiments.current.all.values.sorted { $0.key < $1.key }.map {
            experiment -> JSONValue in
            .object([
                "key": .string(experiment.key), "status": .string(experiment.status.rawValue),
                "variants": .array(experiment.variants.map { .string($0.key) }),
                "screens": .array(experiment.screens.keys.sorted().map(JSONValue.string)),
            ])
        }
        return .json(200, JSONWriter.string(.object(["experiments": .array(entries)])))
    }

    func handle(_ head: RequestHead, path: String, body: [UInt8]) throws(AdminError) -> Response {
        let parts = path.split(separator: "/", maxSplits: 1).map(String.init)
        let key = parts.first ?? ""
        if let problem = Self.validationError(key) { throw AdminError(422, "invalid_experiment_key", problem) }
        let sub = parts.count > 1 ? parts[1] : ""
        switch (head.method, sub) {
        case ("PUT", ""): return try put(key, body)
        case ("GET", ""):
            guard let experiment = services.experiments.current.all[key] else {
                throw AdminError.notFound("no experiment \(key)")
            }
            return .json(200, JSONWriter.string(experiment.json))
        case ("DELETE", ""):
            guard let experiment = services.experiments.current.all[key] else {
                throw AdminError.notFound("no experiment \(key)")
            }
            do {
                _ = try services.experiments.delete(key)
            } catch {
                throw AdminError(500, "storage_failed", "the change could not be made durable: \(error)")
            }
            services.broadcast(.experimentsChanged(Array(experiment.screens.keys)))
            return .json(200, JSONWriter.string(.object(["key": .string(key), "deleted": .bool(true)])))
        case ("GET", "assignment"): return try assignment(key, head)
        case ("GET", "results"): return try results(key)
        default:
            throw AdminError(
                405, "method_not_allowed",
                "/v1/experiments/\(key)\(sub.isEmpty ? "" : "/" + sub) does not accept \(head.method)")
        }
    }

    private func put(_ key: String, _ body: [UInt8]) throws(AdminError) -> Response {
        let json: JSONValue
        do {
            json = try JSONReader.parse(body)
        } catch {
            throw AdminError.badJSON(error)
        }
        let experiment = try Experiment(key: key, json: json)
        let set = services.experiments.current
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
        let previous = set.all[key]
        do {
            _ = try services.experiments.put(experiment)
        } catch {
            throw AdminError(500, "storage_failed", "the change could not be made durable: \(error)")
        }
        let screens = Set(experiment.screens.keys).union(previous?.screens.keys ?? [:].keys)
        services.broadcast(.experimentsChanged(Array(screens)))
        return .json(
            200,
            JSONWriter.string(
                .object([
                    "key": .string(key), "status": .string(experiment.status.rawValue),
                    "screens": .array(screens.sorted().map(JSONValue.string)),
                ])))
    }

    /// `?unit=U[&unit=…][&platform=P&app_version=V]` → the variant of each unit, with the reason.
    private func assignment(_ key: String, _ head: RequestHead) throws(AdminError) -> Response {
        guard let experiment = services.experiments.current.all[key] else {
            throw AdminError.notFound("no experiment \(key)")
        }
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
        let answers = units.map { unit -> JSONValue in
            let client = ClientAttributes(
                session: "", user: unit, device: unit, platform: platform, appVersion: appVersion,
                appVersionText: versionText,
                claimCohorts: [], claims: JSONObject(), connectedAt: 0)
            let outcome = services.experiments.variant(
                experiment, unit: unit, client: client, cohorts: services.cohorts, remember: false)
            return .object([
                "unit": .string(unit), "variant": outcome.variant.map(JSONValue.string) ?? .null,
                "reason": .string(outcome.reason),
            ])
        }
        if answers.count == 1, case .object(var only) = answers[0] {
            only["unit"] = nil
            return .json(200, JSONWriter.string(.object(only)))
        }
        return .json(200, JSONWriter.string(.object(["assignments": .array(answers)])))
    }

    private func results(_ key: String) throws(AdminError) -> Response {
        guard let experiment = services.experiments.current.all[key] else {
            throw AdminError.notFound("no experiment \(key)")
        }
        let counts = services.exposures.results(key)
        let variants = experiment.variants.map { variant -> JSONValue in
            let count = counts[variant.key] ?? (0, 0)
            return .object([
                "variant": .string(variant.key), "served": .number(Double(count.served)),
                "confirmed": .number(Double(count.confirmed)),
            ])
        }
        return .json(
            200,
            JSONWriter.string(
                .object([
                    "key": .string(key), "status": .string(experiment.status.rawValue), "variants": .array(variants),
                ])))
    }
}
