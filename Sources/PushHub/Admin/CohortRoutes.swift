/// `/v1/cohorts…` (DESIGN §7): define, list, show, edit and delete cohorts.
struct CohortRoutes {
    let plane: ControlPlane
    let reply: AdminReply

    /// A cohort name: `[a-z0-9._-]{1,100}`.
    static func validationError(_ name: String) -> String? {
        let allowed = name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        return allowed && (1...100).contains(name.utf8.count)
            ? nil : "a cohort name is 1 to 100 of a-z 0-9 . _ - (got \"\(name)\")"
    }

    func list() {
        plane.afterCommit { [plane, reply] in
            let cohorts = plane.state.view.cohorts.sorted { $0.key < $1.key }.map { name, cohort -> JSONValue in
                .object([
                    "name": .string(name), "users": .number(Double(cohort.users.count)),
                    "rule": .bool(cohort.rule != nil),
                ])
            }
            reply.json(200, .object(["cohorts": .array(cohorts)]))
        }
    }

    func handle(_ head: RequestHead, path: String, body: [UInt8]) throws(AdminError) {
        var name = path
        var part = ""
        for suffix in ["/users", "/rule"] where name.hasSuffix(suffix) {
            name = String(name.dropLast(suffix.count))
            part = String(suffix.dropFirst())
        }
        if let problem = Self.validationError(name) { throw AdminError(422, "invalid_cohort_name", problem) }
        switch (head.method, part) {
        case ("PUT", "rule"):
            // The rule alone: a cohort listing a million users keeps them, and the journal gets
            // the rule, not the list again.
            let request = try AdminBody.object(body, known: ["rule"], shape: "{\"rule\": {…} | null}")
            guard let value = request["rule"] else { throw AdminError(400, "bad_request", "send {\"rule\": {…} | null}") }
            let rule = value == .null ? nil : try AdminError.mapping { () throws(InputError) in try CohortRule(json: value) }
            guard plane.state.view.cohorts[name] != nil || rule != nil else {
                throw AdminError.notFound("no cohort named \(name)")
            }
            plane.commit([.cohortRuleSet(name, rule)], reply: reply) { [plane] _ in
                .object([
                    "name": .string(name), "users": .number(Double(plane.state.view.cohorts[name]?.users.count ?? 0)),
                    "rule": rule?.json ?? .null,
                ])
            }
        case ("PUT", ""):
            let request = try AdminBody.object(body, known: ["users", "rule"])
            let users = Set(try ids(request, "users"))
            var rule: CohortRule?
            if let value = request["rule"], value != .null {
                rule = try AdminError.mapping { () throws(InputError) in try CohortRule(json: value) }
            }
            guard request["users"] != nil || rule != nil else {
                throw AdminError(400, "bad_request", "a cohort needs \"users\" and/or \"rule\"")
            }
            plane.commit([.cohortSet(name, Cohort(users: users, rule: rule))], reply: reply) { _ in
                .object(["name": .string(name), "users": .number(Double(users.count)), "rule": rule?.json ?? .null])
            }
        case ("POST", "users"):
            let request = try AdminBody.object(body, known: ["add", "remove"])
            let add = try ids(request, "add"), remove = try ids(request, "remove")
            plane.commit([.cohortUsersEdited(name, add: add, remove: remove)], reply: reply) { [plane] _ in
                .object([
                    "name": .string(name), "users": .number(Double(plane.state.view.cohorts[name]?.users.count ?? 0)),
                ])
            }
        case ("GET", ""):
            plane.afterCommit { [plane, reply] in
                guard let cohort = plane.state.view.cohorts[name] else {
                    return reply.error(.notFound("no cohort named \(name)"))
                }
                reply.json(
                    200,
                    .object([
                        "name": .string(name), "users": .number(Double(cohort.users.count)),
                        "sample": .array(cohort.users.sorted().prefix(100).map(JSONValue.string)),
                        "rule": cohort.rule?.json ?? .null,
                    ]))
            }
        case ("DELETE", ""):
            guard plane.state.view.cohorts[name] != nil else { throw AdminError.notFound("no cohort named \(name)") }
            plane.commit([.cohortDeleted(name)], reply: reply) { _ in .object(["name": .string(name), "deleted": .bool(true)]) }
        default:
            let accepts = ["users": ["POST"], "rule": ["PUT"]][part] ?? ["GET", "PUT", "DELETE"]
            throw AdminError.methodNotAllowed(head, accepts: accepts)
        }
    }

    private func ids(_ request: JSONValue, _ field: String) throws(AdminError) -> [String] {
        guard let value = request[field], value != .null else { return [] }
        guard let list = value.arrayValue else {
            throw AdminError(400, "bad_\(field)", "\"\(field)\" must be an array of user ids")
        }
        var ids: [String] = []
        ids.reserveCapacity(list.count)
        for (i, element) in list.enumerated() {
            guard let id = element.stringValue, !id.isEmpty else {
                throw AdminError(400, "bad_\(field)", "\"\(field)[\(i)]\" must be a non-empty string")
            }
            ids.append(id)
        }
        return ids
    }
}
