import Glibc

/// `/v1/screens…` (DESIGN §7): publish, read (as a client sees it), list, history, rollback,
/// delete, and the dry run behind `hubctl screen diff`.
///
/// Invariant: a mutation answers 2xx only after its journal record is fsynced, and only then is
/// the change broadcast to the loops.
struct ScreenRoutes {
    let services: HubServices

    func handle(_ head: RequestHead, name fullName: String, body: [UInt8]) throws(AdminError) -> Response {
        var name = fullName
        var action = ""
        for suffix in ["/history", "/rollback"] where name.hasSuffix(suffix) {
            action = String(suffix.dropFirst())
            name = String(name.dropLast(suffix.count))
        }
        if let problem = ScreenName.validationError(name) { throw AdminError(422, "invalid_screen_name", problem) }
        switch (head.method, action) {
        case ("PUT", ""):
            let tree = try parse(body)
            return isDryRun(head) ? try dryRun(name, tree) : try publish(name, tree)
        case ("GET", ""): return try get(name, head)
        case ("DELETE", ""): return try delete(name)
        case ("GET", "history"): return try history(name)
        case ("POST", "rollback"): return try rollback(name, try parse(body))
        case (_, ""): throw AdminError(405, "method_not_allowed", "/v1/screens/\(name) accepts GET, PUT, DELETE")
        case (_, "history"): throw AdminError(405, "method_not_allowed", "\(action) accepts GET")
        default: throw AdminError(405, "method_not_allowed", "\(action) accepts POST")
        }
    }

    func list() -> Response {
        let screens = services.screens.list().map { version -> JSONValue in
            .object([
                "name": .string(version.name), "version": .number(Double(version.version)),
                "hash": .string(version.latestHash), "published_at": .number(Double(version.publishedAt)),
                "subscribers": .number(Double(services.subscriberCounts.total(of: version.name))),
            ])
        }
        return .json(200, JSONWriter.string(.object(["screens": .array(screens)])))
    }

    private func parse(_ body: [UInt8]) throws(AdminError) -> JSONValue {
        guard !body.isEmpty else { throw AdminError(400, "empty_body", "send the screen tree as a JSON body") }
        do {
            return try JSONReader.parse(body)
        } catch {
            throw AdminError.badJSON(error)
        }
    }

    private func isDryRun(_ head: RequestHead) -> Bool {
        head.query.contains { $0.name == "dry_run" && ($0.value == "true" || $0.value == "1") }
    }

    private func publish(_ name: String, _ tree: JSONValue) throws(AdminError) -> Response {
        let (new, previous) = try store {
            try services.screens.publish(name, tree: tree, now: WallClock.nowMilliseconds())
        }
        services.broadcast(.screenPublished(new))
        let reach = services.subscriberCounts.reach(from: previous, to: new)
        return .json(
            200,
            JSONWriter.string(
                .object([
                    "name": .string(name), "version": .number(Double(new.version)), "hash": .string(new.latestHash),
                    "renditions": .number(Double(max(reach.renditions, 1))), "sent": .number(Double(reach.sent)),
                ])))
    }

    /// What a publish would do: the patch (for an up-to-date client) and who would get it.
    private func dryRun(_ name: String, _ tree: JSONValue) throws(AdminError) -> Response {
        let current = services.screens.current(name)
        let candidate = ScreenVersion(
            name: name, version: (current?.version ?? 0) + 1, tree: tree, publishedAt: WallClock.nowMilliseconds())
        let reach = services.subscriberCounts.reach(from: current, to: candidate)
        let before = current?.rendered(for: .latest).tree ?? .null
        let ops = JSONPatchDiff.diff(before, candidate.rendered(for: .latest).tree)
        return .json(
            200,
            JSONWriter.string(
                .object([
                    "name": .string(name), "from": current.map { .number(Double($0.version)) } ?? .null,
                    "version": .number(Double(candidate.version)), "hash": .string(candidate.latestHash),
                    "ops": ops.json,
                    "renditions": .number(Double(max(reach.renditions, 1))), "would_send": .number(Double(reach.sent)),
                    "subscribers": .number(Double(services.subscriberCounts.total(of: name))),
                ])))
    }

    private func get(_ name: String, _ head: RequestHead) throws(AdminError) -> Response {
        guard let current = services.screens.current(name) else { throw AdminError.notFound("no screen named \(name)") }
        var target = RenderTarget.latest
        if let text = head.query.first(where: { $0.name == "app_version" })?.value {
            guard let version = SemanticVersion(text) else {
                throw AdminError(
                    400, "bad_app_version", "app_version \"\(text)\" is not a semantic version such as 5.2.0")
            }
            target.appVersion = version
        }
        let rendered = current.rendered(for: target)
        var body = Array(#"{"name":"#.utf8)
        JSONWriter.writeString(name, to: &body)
        body +=
            Array(#","version":\#(current.version),"hash":"\#(rendered.hash)","tree":"#.utf8) + rendered.canonical + [
                UInt8(ascii: "}")
            ]
        return Response(status: 200, headers: Response.json(200, "").headers, body: body)
    }

    private func history(_ name: String) throws(AdminError) -> Response {
        guard let versions = services.screens.history(name) else {
            throw AdminError.notFound("no screen named \(name)")
        }
        let entries = versions.reversed().map { version -> JSONValue in
            .object([
                "version": .number(Double(version.version)), "hash": .string(version.latestHash),
                "published_at": .number(Double(version.publishedAt)),
            ])
        }
        return .json(200, JSONWriter.string(.object(["name": .string(name), "versions": .array(entries)])))
    }

    private func rollback(_ name: String, _ request: JSONValue) throws(AdminError) -> Response {
        guard let versions = services.screens.history(name), let current = versions.last else {
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
        guard earlier.version != current.version else {
            throw AdminError(409, "already_current", "version \(target) is the current version of \(name)")
        }
        return try publish(name, earlier.tree)
    }

    private func delete(_ name: String) throws(AdminError) -> Response {
        let subscribers = services.subscriberCounts.total(of: name)
        guard let last = try store({ try services.screens.delete(name) }) else {
            throw AdminError.notFound("no screen named \(name)")
        }
        services.broadcast(.screenDeleted(name))
        return .json(
            200,
            JSONWriter.string(
                .object([
                    "name": .string(name), "deleted": .bool(true), "last_version": .number(Double(last.version)),
                    "sent": .number(Double(subscribers)),
                ])))
    }

    /// Runs a store mutation; a failure to persist is a 500 that says so (nothing was changed).
    private func store<T>(_ body: () throws -> T) throws(AdminError) -> T {
        do {
            return try body()
        } catch {
            Log.error("persisting a screen change failed", [("error", "\(error)")])
            throw AdminError(500, "storage_failed", "the change could not be made durable: \(error)")
        }
    }
}
