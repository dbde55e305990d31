/// `/v1/cohorts…` (DESIGN §7): define, list, show, edit and delete cohorts.
struct CohortRoutes: AdminHandlers {
    let call: AdminCall

    init(_ call: AdminCall) { self.call = call }

    /// The cohort the path names (`/v1/cohorts/{name}…`).
    private var name: String { call.variable }

    /// A cohort name: `[a-z0-9._-]{1,100}`.
    static func validationError(_ name: String) -> String? { Identifier.validationError(name, kind: "a cohort name") }

    func list() {
        let cohorts = call.state.view.cohorts.sorted { $0.key < $1.key }.map { name, cohort -> JSONValue in
            .object([
                "name": .string(name), "users": .number(Double(cohort.users.count)), "rule": .bool(cohort.rule != nil),
            ])
        }
        reply.json(200, .object(["cohorts": .array(cohorts)]))
    }

    /// `GET /v1/cohorts/{name}`: its user count, the first 100 users, and its rule.
    func get() throws(AdminError) {
        guard let cohort = call.state.view.cohorts[name] else { throw AdminError.notFound("no cohort named \(name)") }
        reply.json(
            200,
            .object([
                "name": .string(name), "users": .number(Double(cohort.users.count)),
                "sample": .array(cohort.users.sorted().prefix(100).map(JSONValue.string)),
                "rule": cohort.rule?.json ?? .null,
            ]))
    }

    /// `PUT /v1/cohorts/{name} {"users": […]?, "rule": {…}?}`: defines (or replaces) the cohort.
    func put() throws(AdminError) {
        let request = try AdminBody.object(call.body, known: ["users", "rule"])
        let users = Set(try ids(request, "users"))
        var rule: CohortRule?
        if let value = request["rule"], value != .null {
            rule = try AdminError.mapping { () throws(InputError) in try CohortRule(json: value) }
        }
        guard request["users"] != nil || rule != nil else {
            throw AdminError(400, "bad_request", "a cohort needs \"users\" and/or \"rule\"")
        }
        call.commit([.cohortSet(name, Cohort(users: users, rule: rule))]) { [name] _ in
            .object(["name": .string(name), "users": .number(Double(users.count)), "rule": rule?.json ?? .null])
        }
    }

    /// `PUT /v1/cohorts/{name}/rule {"rule": {…} | null}`: the rule alone — a cohort listing a
    /// million users keeps them, and the journal gets the rule, not the list again.
    func setRule() throws(AdminError) {
        let request = try AdminBody.object(call.body, known: ["rule"], shape: "{\"rule\": {…} | null}")
        guard let value = request["rule"] else { throw AdminError(400, "bad_request", "send {\"rule\": {…} | null}") }
        let rule =
            value == .null ? nil : try AdminError.mapping { () throws(InputError) in try CohortRule(json: value) }
        guard call.state.view.cohorts[name] != nil || rule != nil else {
            throw AdminError.notFound("no cohort named \(name)")
        }
        call.commit([.cohortRuleSet(name, rule)]) { [plane, name] _ in
            .object([
                "name": .string(name), "users": .number(Double(plane.committed.view.cohorts[name]?.users.count ?? 0)),
                "rule": rule?.json ?? .null,
            ])
        }
    }

    /// `POST /v1/cohorts/{name}/users {"add": […], "remove": […]}`.
    func editUsers() throws(AdminError) {
        let request = try AdminBody.object(call.body, known: ["add", "remove"])
        let add = try ids(request, "add"), remove = try ids(request, "remove")
        call.commit([.cohortUsersEdited(name, add: add, remove: remove)]) { [plane, name] _ in
            .object(["name": .string(name), "users": .number(Double(plane.committed.view.cohorts[name]?.users.count ?? 0))])
        }
    }

    func delete() throws(AdminError) {
        guard call.state.view.cohorts[name] != nil else { throw AdminError.notFound("no cohort named \(name)") }
        call.commit([.cohortDeleted(name)]) { [name] _ in .object(["name": .string(name), "deleted": .bool(true)]) }
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
