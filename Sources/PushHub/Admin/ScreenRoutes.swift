import Glibc

/// `/v1/screens…` (DESIGN §7): publish, read (as a client sees it), list, history, rollback,
/// delete, and the dry run behind `hubctl screen diff`.
///
/// Invariant: a mutation answers 2xx only after its journal record is fsynced and every loop has
/// brought its subscribers to it (its answer counts what they sent).
struct ScreenRoutes: AdminHandlers {
    let call: AdminCall

    init(_ call: AdminCall) { self.call = call }

    /// The screen the path names (`/v1/screens/{name}…`, percent-decoded).
    private var name: String { call.variable }

    /// `PUT /v1/screens/{name}[?message=TEXT]`: publishes the body as the next version, or with
    /// `?dry_run=true` only tells what that would do.
    func put() throws(AdminError) {
        let tree = try parse(call.body)
        try Self.checkPublishable(tree, call: call)
        try Self.refuseWhileReleasing(name, in: call.state)
        // Checked in a dry run too, so that it tells whether the publish would be taken.
        let message = try Self.message(call.query("message"), field: "?message=")
        call.changes ? publish(tree, message: message) : dryRun(tree)
    }

    /// The longest message a version may carry, in Unicode scalars (what most languages count).
    static let maxMessageScalars = 500

    /// A publish's or rollback's message: nil or "" is none; one line (it is shown in history
    /// tables and terminals, so no control characters) of at most `maxMessageScalars`.
    static func message(_ text: String?, field: String) throws(AdminError) -> String? {
        guard let text, !text.isEmpty else { return nil }
        let length = text.unicodeScalars.count
        guard length <= maxMessageScalars else {
            throw AdminError(
                400, "bad_message",
                "\(field) is \(length) characters; a version's message may have at most \(maxMessageScalars)")
        }
        if let control = text.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            let hex = String(control.value, radix: 16, uppercase: true)
            throw AdminError(
                400, "bad_message",
                "\(field) contains control character U+\(String(repeating: "0", count: 4 - hex.count) + hex); "
                    + "a version's message is one line of text")
        }
        return text
    }

    func list() {
        call.gather(.subscribers) { [plane, reply] answers in
            var subscribers: [String: Int] = [:]
            for case .subscribers(let counts) in answers { subscribers.merge(counts, uniquingKeysWith: +) }
            let screens = call.state.view.screens.values.compactMap(\.last).sorted { $0.name < $1.name }.map {
                version -> JSONValue in
                let release = call.state.rollingRelease(version.name)
                return .object([
                    "name": .string(version.name), "version": .number(Double(version.version)),
                    "hash": .string(plane.latestHash(version)), "published_at": .number(Double(version.publishedAt)),
                    "subscribers": .number(Double(subscribers[version.name] ?? 0)),
                    // The rolling release, if any (DESIGN §15): `version` above is its base.
                    "release": release.map {
                        .object([
                            "release": .string($0.id), "version": .number(Double($0.candidate.version)),
                            "percent": ReleaseExposure.percent(basisPoints: $0.basisPoints),
                        ])
                    } ?? .null,
                ])
            }
            reply.json(200, .object(["screens": .array(screens)]))
        }
    }

    private func parse(_ body: [UInt8]) throws(AdminError) -> JSONValue {
        guard !body.isEmpty else { throw AdminError(400, "empty_body", "send the screen tree as a JSON body") }
        return try AdminBody.json(body)
    }

    /// A body's `"message"` member (absent or null: none) checked as `message(_:field:)`.
    static func message(member value: JSONValue?) throws(AdminError) -> String? {
        guard let value, value != .null else { return nil }
        guard let text = value.stringValue else {
            throw AdminError(400, "bad_message", "\"message\" must be a string (or null)")
        }
        return try message(text, field: "\"message\"")
    }

    /// A tree every client can be sent: each `min_app_version` a semantic version.
    static func checkPublishable(_ tree: JSONValue, call: AdminCall) throws(AdminError) {
        if let path = Rendition.invalidThreshold(in: tree) {
            throw AdminError(
                422, "invalid_min_app_version",
                "\(path) must be a semantic version such as \"5.3.0\" (each number at most \(Int.max))")
        }
        try ComponentCheck(call: call).check(tree, screen: call.variable)
    }

    /// A screen with a rolling release takes no other publish, delete or rollback (DESIGN §15).
    static func refuseWhileReleasing(_ name: String, in state: HubState) throws(AdminError) {
        guard let release = state.rollingRelease(name) else { return }
        var error = AdminError(
            409, "release_rolling", "\(name) has release \(release.id) rolling: promote or halt it first")
        error.details["release"] = .string(release.id)
        throw error
    }

    /// Publishes `tree` as the next version, by the call's token.
    /// - Parameter rollbackOf: the kept version whose tree this republishes (a rollback).
    private func publish(_ tree: JSONValue, message: String?, rollbackOf: Int? = nil) {
        let version = ScreenVersion(
            name: name, version: call.state.nextVersion(of: name), tree: tree,
            publishedAt: WallClock.nowMilliseconds(), author: call.token?.name, message: message,
            rollbackOf: rollbackOf)
        call.commit([.screenPublished(version)], gathering: true) { [plane, name] answers in
            var sent = 0
            var renditions = Set<RenditionKey>()
            for case .published(let count, let keys) in answers {
                sent += count
                renditions.formUnion(keys)
            }
            return .object([
                "name": .string(name), "version": .number(Double(version.version)),
                "hash": .string(plane.latestHash(version)), "renditions": .number(Double(max(renditions.count, 1))),
                "sent": .number(Double(sent)),
            ])
        }
    }

    /// What a publish would do: the patch (for an up-to-date client) and who would get it.
    private func dryRun(_ tree: JSONValue) {
        call.gather(.renderTargets(screen: name)) { [call, reply, name] answers in
            var targets: [RenderTarget: Int] = [:]
            for case .renderTargets(let counts) in answers { targets.merge(counts, uniquingKeysWith: +) }
            let current = call.state.view.current(name)
            let candidate = ScreenVersion(
                name: name, version: call.state.nextVersion(of: name), tree: tree,
                publishedAt: WallClock.nowMilliseconds())
            // A scratch cache: the candidate is never published, so nothing of it is kept.
            var scratch = RenditionCache()
            let reach = scratch.reach(from: current, to: candidate, targets: targets)
            let latest = call.state.view.latestTarget
            let before = current.map { scratch.rendered($0, for: latest).tree } ?? .null
            let after = scratch.rendered(candidate, for: latest)
            let ops = JSONPatchDiff.diff(before, after.tree)
            // Then who would get a fallback or lose a node, over every connected client (DESIGN §16).
            call.gather(.clientBuilds) { [call, reply, name] answers in
                reply.json(
                    200,
                    .object([
                        "name": .string(name), "from": current.map { .number(Double($0.version)) } ?? .null,
                        "version": .number(Double(candidate.version)), "hash": .string(after.hash),
                        "ops": ops.json, "renditions": .number(Double(max(reach.renditions, 1))),
                        "would_send": .number(Double(reach.sent)),
                        "subscribers": .number(Double(targets.values.reduce(0, +))),
                        "components": FallbackReport.json(
                            tree: tree, builds: answers.clientBuilds, registry: call.state.view.components),
                    ]))
            }
        }
    }

    /// The client `?user=&device=&platform=&app_version=&components=` describe (nil: none, the base tree at
    /// the latest app version). Without a user or device there is no unit, so no variants: the
    /// base tree as that app version sees it. Its cohorts are those its user is listed in or its
    /// attributes match; token-claim cohorts are not known here.
    private func clientAttributes() throws(AdminError) -> ClientAttributes? {
        let value = call.query
        var appVersion: SemanticVersion?
        if let text = value("app_version") {
            guard let version = SemanticVersion(text) else {
                throw AdminError(
                    400, "bad_app_version", "app_version \"\(text)\" is not a semantic version such as 5.2.0")
            }
            appVersion = version
        }
        let components = try value("components").map { text throws(AdminError) in
            try AdminError.mapping { () throws(InputError) in try DeclaredComponents(query: text) }
        }
        let user = value("user"), device = value("device"), platform = value("platform")
        guard user != nil || device != nil || platform != nil || appVersion != nil || components != nil else {
            return nil
        }
        return ClientAttributes(
            session: "admin", user: user, device: device ?? user ?? "", platform: platform,
            appVersion: appVersion, claimCohorts: [], claims: [:], connectedAt: 0, components: components)
    }

    /// `GET /v1/screens/{name}`: the tree the client the query describes receives (DESIGN §7–8):
    /// its variants of the running experiments, then its app version's capability filter — what a
    /// session of that client is sent.
    func get() throws(AdminError) {
        let client = try clientAttributes()
        let view = call.state.view
        let seen = client.flatMap { view.current(name, for: $0) } ?? view.current(name)
        guard let current = seen else { throw AdminError.notFound("no screen named \(name)") }
        let target =
            client.map {
                view.renderTarget(for: $0, on: name, capabilities: plane.renditions.capabilities(of: $0, view: view))
            } ?? view.latestTarget
        let rendered = plane.renditions.rendered(current, for: target)
        var body = Array(#"{"name":"#.utf8)
        JSONWriter.writeString(name, to: &body)
        body +=
            Array(#","version":\#(current.version),"hash":"\#(rendered.hash)","tree":"#.utf8) + rendered.canonical + [
                UInt8(ascii: "}")
            ]
        reply(Response(status: 200, headers: Response.json(200, "").headers, body: body))
    }

    /// `?from=V1[&to=V2]` (`to` defaults to the current version).
    private func versionPair() throws(AdminError) -> (Int, Int?) {
        func number(_ field: String) throws(AdminError) -> Int? {
            guard let text = call.query(field) else { return nil }
            guard let value = Int(text), value > 0 else {
                throw AdminError(400, "bad_version", "\(field) must be a version number, not \"\(text)\"")
            }
            return value
        }
        guard let from = try number("from") else {
            throw AdminError(400, "bad_version", "give ?from=VERSION (and optionally &to=VERSION)")
        }
        return (from, try number("to"))
    }

    /// `GET /v1/screens/{name}/diff?from=V1[&to=V2]`: the RFC 6902 ops from kept version `from`
    /// to kept version `to`, as a client at the latest app version without variants would receive them.
    func diff() throws(AdminError) {
        let (from, to) = try versionPair()
        guard let versions = call.state.view.screens[name], let current = versions.last else {
            throw AdminError.notFound("no screen named \(name)")
        }
        let kept = versions.map(\.version).map(String.init).joined(separator: ", ")
        guard let old = versions.first(where: { $0.version == from }),
            let new = versions.first(where: { $0.version == (to ?? current.version) })
        else {
            throw AdminError.notFound("\(name) keeps versions \(kept); ask for two of those")
        }
        let latest = call.state.view.latestTarget
        let before = plane.renditions.rendered(old, for: latest), after = plane.renditions.rendered(new, for: latest)
        reply.json(
            200,
            .object([
                "name": .string(name), "from": .number(Double(old.version)), "to": .number(Double(new.version)),
                "from_hash": .string(before.hash), "to_hash": .string(after.hash),
                "ops": JSONPatchDiff.diff(before.tree, after.tree).json,
            ]))
    }

    func history() throws(AdminError) {
        guard let versions = call.state.view.screens[name] else {
            throw AdminError.notFound("no screen named \(name)")
        }
        let entries = versions.reversed().map { version -> JSONValue in
            .object([
                "version": .number(Double(version.version)), "hash": .string(plane.latestHash(version)),
                "published_at": .number(Double(version.publishedAt)),
                "author": version.author.map(JSONValue.string) ?? .null,
                "message": version.message.map(JSONValue.string) ?? .null,
                "rollback_of": version.rollbackOf.map { .number(Double($0)) } ?? .null,
            ])
        }
        reply.json(200, .object(["name": .string(name), "versions": .array(entries)]))
    }

    /// `POST /v1/screens/{name}/rollback {"to": V, "message": TEXT}` (both optional; without `to`,
    /// the previous version): publishes version V's tree as a new version marked `rollback_of`.
    /// When V's tree is the current tree (V is the current version, or an equal tree) nothing is
    /// published: the answer says `unchanged`, so a retried or repeated rollback is harmless.
    func rollback() throws(AdminError) {
        guard !call.body.isEmpty else { throw AdminError(400, "empty_body", "send {\"to\": VERSION} or {}") }
        let request = try AdminBody.object(
            call.body, known: ["to", "message"], shape: "{\"to\": VERSION, \"message\": TEXT} (both optional)")
        let message = try Self.message(member: request["message"])
        try Self.refuseWhileReleasing(name, in: call.state)
        guard let versions = call.state.view.screens[name], let current = versions.last else {
            throw AdminError.notFound("no screen named \(name)")
        }
        let target: Int
        if let to = request["to"], to != .null {
            guard let number = to.intValue else {
                throw AdminError(400, "bad_request", "\"to\" must be a version number")
            }
            target = number
        } else {
            guard versions.count >= 2 else {
                throw AdminError(409, "no_earlier_version", "\(name) has no earlier version kept")
            }
            target = versions[versions.count - 2].version
        }
        guard let earlier = versions.first(where: { $0.version == target }) else {
            let kept = versions.map { String($0.version) }.joined(separator: ", ")
            throw AdminError(
                404, "version_not_kept", "version \(target) of \(name) is not kept; kept versions: \(kept)")
        }
        guard earlier.tree != current.tree else {
            // Answered once what the current version came with is durable (it may be this tick's).
            return call.commit([]) { [name] _ in
                .object([
                    "name": .string(name), "version": .number(Double(current.version)), "unchanged": .bool(true),
                    "sent": .number(0),
                ])
            }
        }
        // The registry may have changed since that version was live: it is checked as a publish.
        try Self.checkPublishable(earlier.tree, call: call)
        publish(earlier.tree, message: message, rollbackOf: earlier.version)
    }

    func delete() throws(AdminError) {
        guard let last = call.state.view.current(name) else { throw AdminError.notFound("no screen named \(name)") }
        try Self.refuseWhileReleasing(name, in: call.state)
        call.commit([.screenDeleted(name)], gathering: true) { [name] answers in
            .object([
                "name": .string(name), "deleted": .bool(true), "last_version": .number(Double(last.version)),
                "sent": .number(Double(answers.totalCount)),
            ])
        }
    }
}
