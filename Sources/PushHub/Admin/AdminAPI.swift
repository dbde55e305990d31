import WSProtocol

/// The admin HTTP API (DESIGN §7): routes a request to its handler and answers.
///
/// Invariants: every route but `/healthz` requires `Authorization: Bearer <admin token>`
/// (compared in constant time); every error is `{"error":{"code","message"}}` with its status.
/// Handlers run on the loop that read the request; mutations are durable before they answer.
public struct AdminAPI: Sendable {
    let services: HubServices

    public init(services: HubServices) { self.services = services }

    public func handle(_ head: RequestHead, body: [UInt8]) -> Response {
        do {
            return try route(head, body: body)
        } catch {
            return error.response
        }
    }

    private func route(_ head: RequestHead, body: [UInt8]) throws(AdminError) -> Response {
        let path = String(head.path)
        if path == "/healthz" {
            try allow(head, "GET", "HEAD")
            return .json(200, #"{"status":"ok"}"#)
        }
        guard isAuthorized(head) else {
            var response = Response.error(
                401, code: "unauthorized",
                message: "send Authorization: Bearer <token>; the token is in admin.token in the data dir")
            response.headers.append(name: "WWW-Authenticate", value: "Bearer")
            return response
        }
        switch path {
        case "/v1/stats":
            try allow(head, "GET")
            return .json(200, statsJSON())
        case "/metrics":
            try allow(head, "GET")
            var headers = HeaderFields()
            headers.append(name: "Content-Type", value: "text/plain; version=0.0.4")
            return Response(status: 200, headers: headers, body: Array(services.metrics.prometheusText().utf8))
        case "/v1/screens":
            try allow(head, "GET")
            return ScreenRoutes(services: services).list()
        case "/v1/syncs":
            try allow(head, "POST")
            return try SyncRoutes(services: services).send(body)
        case "/v1/clients":
            try allow(head, "GET")
            return SyncRoutes(services: services).clients(head)
        case "/v1/cohorts":
            try allow(head, "GET")
            return CohortRoutes(services: services).list()
        case "/v1/experiments":
            try allow(head, "GET")
            return ExperimentRoutes(services: services).list()
        default:
            if path.hasPrefix("/v1/screens/") {
                return try ScreenRoutes(services: services).handle(
                    head, name: RequestHead.percentDecoded(path.dropFirst("/v1/screens/".count)), body: body)
            }
            if path.hasPrefix("/v1/syncs/") {
                try allow(head, "GET")
                return try SyncRoutes(services: services).status(String(path.dropFirst("/v1/syncs/".count)))
            }
            if path.hasPrefix("/v1/experiments/") {
                return try ExperimentRoutes(services: services).handle(
                    head, path: String(path.dropFirst("/v1/experiments/".count)), body: body)
            }
            if path.hasPrefix("/v1/cohorts/") {
                return try CohortRoutes(services: services).handle(
                    head, path: String(path.dropFirst("/v1/cohorts/".count)), body: body)
            }
            throw AdminError.notFound("no admin route \(head.method) \(path)")
        }
    }

    func statsJSON() -> String {
        let metrics = services.metrics
        let values: [(String, JSONValue)] = [
            ("connections", .number(Double(metrics.openConnections.load(ordering: .relaxed)))),
            ("websocket_connections", .number(Double(metrics.webSocketConnections.load(ordering: .relaxed)))),
            ("messages_in", .number(Double(metrics.messagesIn.load(ordering: .relaxed)))),
            ("messages_out", .number(Double(metrics.messagesOut.load(ordering: .relaxed)))),
            ("screens", .number(Double(services.screens.list().count))),
            ("sessions", .number(Double(services.online.count))),
            ("sync_seq", .number(Double(services.syncs.lastSeq))),
            ("client_listen", .string(services.clientAddress.description)),
        ]
        return JSONWriter.string(.object(JSONObject(Dictionary(uniqueKeysWithValues: values))))
    }

    /// Refuses other methods with 405 and `Allow`.
    func allow(_ head: RequestHead, _ methods: String...) throws(AdminError) {
        guard methods.contains(head.method) else {
            throw AdminError(
                405, "method_not_allowed", "\(head.path) accepts \(methods.joined(separator: ", ")), not \(head.method)"
            )
        }
    }

    private func isAuthorized(_ head: RequestHead) -> Bool {
        guard let value = head.headers["Authorization"], value.hasPrefix("Bearer ") else { return false }
        return JWTVerifier.constantTimeEquals(Array(value.utf8.dropFirst(7)), Array(services.adminToken.utf8))
    }

}
