/// `/v1/cohorts…` (DESIGN §7): define, list, show, edit and delete cohorts.
struct CohortRoutes {
    let services: HubServices

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

    func list() -> Response {
        let cohorts = services.cohorts.names().map { name, count, hasRule -> JSONValue in
            .object(["name": .string(name), "users": .number(Double(count)), "rule": .bool(hasRule)])
        }
        return .json(200, JSONWriter.string(.object(["cohorts": .array(cohorts)])))
    }

    func handle(_ head: RequestHead, path: String, body: [UInt8]) throws(AdminError) -> Response {
        var name = path
        var editUsers = false
        if name.hasSuffix("/users") {
            name = String(name.dropLast("/users".count))
            editUsers = true
        }
        if let problem = Self.validationError(name) { throw AdminError(422, "invalid_cohort_name", problem) }
        switch (head.method, editUsers) {
        case ("PUT", false):
            let request = try parse(body)
            let users = try ids(request, "users")
            let rule = try request["rule"].flatMap { value throws(AdminError) -> CohortRule? in
                value == .null ? nil : try CohortRule(json: value)
            }
            guard request["users"] != nil || rule != nil else {
                throw AdminError(400, "bad_request", "a cohort needs \"users\" and/or \"rule\"")
            }
            try store { try services.cohorts.set(name, users: Set(users), rule: rule) }
            return .json(
                200,
                JSONWriter.string(
                    .object([
                        "name": .string(name), "users": .number(Double(Set(users).count)),
                        "rule": rule?.json ?? .null,
                    ])))
        case ("POST", true):
            let request = try parse(body)
            let add = try ids(request, "add"), remove = try ids(request, "remove")
            try store { try services.cohorts.edit(name, add: add, remove: remove) }
            return .json(
                200,
                JSONWriter.string(
                    .object([
                        "name": .string(name),
                        "users": .number(Double(services.cohorts.get(name)?.users.count ?? 0)),
                    ])))
        case ("GET", false):
            guard let cohort = services.cohorts.get(name) else { throw AdminError.notFound("no cohort named \(name)") }
            return .json(
                200,
                JSONWriter.string(
                    .object([
                        "name": .string(name), "users": .number(Double(cohort.users.count)),
                        "sample": .array(cohort.users.sorted().prefix(100).map(JSONValue.string)),
                        "rule": cohort.rule?.json ?? .null,
                    ])))
        case ("DELETE", false):
            guard services.cohorts.get(name) != nil else { throw AdminError.notFound("no cohort named \(name)") }
            try store { try services.cohorts.delete(name) }
            return .json(200, JSONWriter.string(.object(["name": .string(name), "deleted": .bool(true)])))
        default:
            throw AdminError(
                405, "method_not_allowed",
                editUsers ? "users accepts POST" : "/v1/cohorts/\(name) accepts GET, PUT, DELETE")
        }
    }

    private func parse(_ body: [UInt8]) throws(AdminError) -> JSONValue {
        do {
            let json = try JSONReader.parse(body)
            guard case .object = json else { throw AdminError(400, "bad_request", "the body must be a JSON object") }
            return json
        } catch let error as JSONError {
            throw AdminError.badJSON(error)
        } catch {
            throw error as! AdminError
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

    private func store(_ body: () throws -> Void) throws(AdminError) {
        do {
            try body()
        } catch {
            throw AdminError(500, "storage_failed", "the change could not be made durable: \(error)")
        }
    }
}
