/// `/v1/screens/{name}/releases…` (DESIGN §15): start a release, read releases with their
/// health, raise the percent, promote, halt; each change with a dry run where it exposes clients.
///
/// Invariants: at most one release per screen rolls; its percent only rises; a change answers
/// once its record is durable and every loop has brought its subscribers to it (`sent` counts
/// the clients sent an update).
struct ReleaseRoutes: AdminHandlers {
    let call: AdminCall

    init(_ call: AdminCall) { self.call = call }

    private var name: String { call.variable }
    private var id: String { call.variables.count > 1 ? call.variables[1] : "" }
    private var actor: String { call.token?.name ?? "-" }

    // MARK: - Reading

    /// `GET /v1/screens/{name}/releases`: the kept releases, newest first, each with its health.
    func list() throws(AdminError) {
        guard call.state.view.current(name) != nil || call.state.releases[name] != nil else {
            throw AdminError.notFound("no screen named \(name)")
        }
        plane.results.whenCurrent(now: MonotonicClock.now()) { [plane, reply, name] failure in
            let releases = (plane.committed.releases[name] ?? []).reversed().map { Self.described($0, plane) }
            var members: JSONObject = ["screen": .string(name), "releases": .array(releases.map(JSONValue.object))]
            if let failure { members["warning"] = .string(failure) }
            reply.json(200, .object(members))
        }
    }

    /// `GET /v1/screens/{name}/releases/{id}`: one release with its health and steps.
    func get() throws(AdminError) {
        _ = try release(in: call.state)
        plane.results.whenCurrent(now: MonotonicClock.now()) { [plane, reply, name, id] failure in
            guard let release = plane.committed.release(name, id) else {
                return reply.error(AdminError.notFound("no release \(id) of \(name)"))
            }
            var members = Self.described(release, plane)
            if let failure { members["warning"] = .string(failure) }
            reply.json(200, .object(members))
        }
    }

    /// The release as answers show it: its record with its health.
    private static func described(_ release: Release, _ plane: ControlPlane) -> JSONObject {
        var members = release.json
        members["health"] = .object(
            (plane.results.releases.health(screen: release.screen, release: release.id) ?? ReleaseHealth()).json)
        return members
    }

    private func release(in state: HubState) throws(AdminError) -> Release {
        guard let release = state.release(name, id) else { throw AdminError.notFound("no release \(id) of \(name)") }
        return release
    }

    private func rolling() throws(AdminError) -> Release {
        let release = try release(in: call.state)
        guard release.status == .rolling else {
            throw AdminError(409, "release_not_rolling", "release \(id) of \(name) is \(release.status.rawValue)")
        }
        return release
    }

    // MARK: - Changing

    /// `POST /v1/screens/{name}/releases[?dry_run=true]`: starts a release of the body's `tree`.
    func start() throws(AdminError) {
        let shape =
            "{\"tree\": {…}, \"qa_cohort\": \"qa\", \"percent\": 1, "
            + "\"guard\": {\"max_error_rate\": 0.02, \"min_units\": 50}, \"message\": \"…\"} (tree required)"
        guard !call.body.isEmpty else { throw AdminError(400, "empty_body", "send \(shape)") }
        let request = try AdminBody.object(
            call.body, known: ["tree", "qa_cohort", "percent", "guard", "message"], shape: shape)
        guard let tree = request["tree"] else {
            throw AdminError(400, "bad_request", "\"tree\" is required: send \(shape)")
        }
        try ScreenRoutes.checkPublishable(tree, call: call)
        var qaCohort: String?
        if let cohort = request["qa_cohort"], cohort != .null {
            guard let text = cohort.stringValue, CohortRoutes.validationError(text) == nil else {
                throw AdminError(400, "bad_request", "\"qa_cohort\" must be a cohort name (or null)")
            }
            qaCohort = text
        }
        let points = try Self.basisPoints(request["percent"] ?? .number(0))
        let healthGuard: ReleaseGuard
        do {
            healthGuard = try ReleaseGuard(json: request["guard"])
        } catch {
            throw AdminError(400, error.code, error.message)
        }
        let message = try ScreenRoutes.message(member: request["message"])
        let state = call.state
        guard let base = state.view.current(name) else {
            throw AdminError.notFound("no screen named \(name): a release needs a published version to start from")
        }
        try ScreenRoutes.refuseWhileReleasing(name, in: state)
        guard tree != base.tree else {
            throw AdminError(
                422, "same_as_base", "the tree equals version \(base.version) of \(name): nothing to release")
        }
        let now = WallClock.nowMilliseconds()
        let candidate = ScreenVersion(
            name: name, version: state.nextVersion(of: name), tree: tree, publishedAt: now, author: call.token?.name,
            message: message)
        let release = Release(
            screen: name, baseVersion: base.version, candidate: candidate, qaCohort: qaCohort, healthGuard: healthGuard,
            steps: [Release.Step(at: now, actor: actor, action: .start(basisPoints: points))])
        guard call.changes else {
            return dryRun(
                release, basisPoints: points, from: nil, extra: ["base_version": .number(Double(base.version))])
        }
        call.commit([.releasePut(release)], gathering: true, status: 201) { [plane, name, id = release.id] answers in
            var members = Self.described(plane.committed.release(name, id) ?? release, plane)
            members["sent"] = .number(Double(answers.totalCount))
            members["hash"] = .string(plane.latestHash(candidate))
            return .object(members)
        }
    }

    /// `POST /v1/screens/{name}/releases/{id}/percent {"percent": P}[?dry_run=true]`: exposes more units.
    func setPercent() throws(AdminError) {
        let shape = "{\"percent\": a number from 0 to 100}"
        let request = try AdminBody.object(call.body, known: ["percent"], shape: shape)
        guard let percent = request["percent"] else { throw AdminError(400, "bad_request", "send \(shape)") }
        let points = try Self.basisPoints(percent)
        let release = try rolling()
        guard points >= release.basisPoints else {
            throw AdminError(
                409, "percent_down",
                "release \(id) is at \(JSONWriter.string(ReleaseExposure.percent(basisPoints: release.basisPoints)))%: "
                    + "a percent only rises while it rolls (halt it to go back)")
        }
        guard call.changes else { return dryRun(release, basisPoints: points, from: release.basisPoints) }
        guard points > release.basisPoints else { return answerUnchanged() }
        step(.percent(basisPoints: points))
    }

    /// `POST /v1/screens/{name}/releases/{id}/promote`: everyone gets the candidate.
    func promote() throws(AdminError) {
        if !call.body.isEmpty { _ = try AdminBody.object(call.body, known: [], shape: "{} or no body") }
        _ = try rolling()
        step(.promote)
    }

    /// `POST /v1/screens/{name}/releases/{id}/halt {"reason": TEXT}`: the exposed go back to the base tree.
    func halt() throws(AdminError) {
        let shape = "{\"reason\": \"why it is halted\"}"
        let request = try AdminBody.object(call.body, known: ["reason"], shape: shape)
        guard let text = request["reason"]?.stringValue, !text.trimmingWhitespace().isEmpty else {
            throw AdminError(400, "bad_request", "a halt needs a reason: send \(shape)")
        }
        let reason = try ScreenRoutes.message(text, field: "\"reason\"") ?? text
        _ = try rolling()
        step(.halt(Release.Halt(reason: reason, numbers: nil, revertVersion: call.state.nextVersion(of: name))))
    }

    /// Takes `action` now, answering the release as it then is and how many clients were sent an update.
    private func step(_ action: Release.Step.Action) {
        let step = Release.Step(at: WallClock.nowMilliseconds(), actor: actor, action: action)
        call.commit([.releaseStepped(screen: name, release: id, step)], gathering: true) { [plane, name, id] answers in
            if case .halt = action { plane.metrics.releaseHaltsManual.add(1, ordering: .relaxed) }
            var members = plane.committed.release(name, id).map { Self.described($0, plane) } ?? [:]
            members["sent"] = .number(Double(answers.totalCount))
            return .object(members)
        }
    }

    /// A percent the release has already: nothing changes; answered once earlier changes are durable.
    private func answerUnchanged() {
        call.commit([]) { [plane, name, id] _ in
            var members = plane.committed.release(name, id).map { Self.described($0, plane) } ?? [:]
            members["unchanged"] = .bool(true)
            members["sent"] = .number(0)
            return .object(members)
        }
    }

    /// What a percent would expose among the screen's connected subscribers (every hub's).
    private func dryRun(_ release: Release, basisPoints points: Int, from: Int?, extra: JSONObject = [:]) {
        let reach = ReleaseReach(
            screen: name, release: release.id, qaCohort: release.qaCohort, basisPoints: points, fromBasisPoints: from)
        call.gather(.releaseReach(reach)) { [reply, name] answers in
            var subscribers = 0, exposed = 0, before = 0
            for case .releaseReach(let s, let e, let b) in answers {
                subscribers += s
                exposed += e
                before += b
            }
            var members: JSONObject = [
                "dry_run": .bool(true), "screen": .string(name), "release": .string(release.id),
                "version": .number(Double(release.candidate.version)),
                "percent": ReleaseExposure.percent(basisPoints: points), "subscribers": .number(Double(subscribers)),
                "would_expose": .number(Double(exposed)), "newly_exposed": .number(Double(exposed - before)),
            ]
            for (key, value) in extra { members[key] = value }
            reply.json(200, .object(members))
        }
    }

    private static func basisPoints(_ value: JSONValue) throws(AdminError) -> Int {
        guard let percent = value.numberValue, let points = ReleaseExposure.basisPoints(percent: percent) else {
            throw AdminError(400, "bad_percent", "\"percent\" must be a number from 0 to 100")
        }
        return points
    }
}
