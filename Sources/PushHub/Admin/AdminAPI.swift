import WSProtocol

/// The admin HTTP API (DESIGN §7): routes a request to its handler and answers.
///
/// Invariants: every route but `/healthz` requires `Authorization: Bearer <admin token>`
/// (compared in constant time); every error is `{"error":{"code","message"}}` with its status.
/// Handlers run on the control plane's loop; a mutation answers after its record is durable and
/// its change reached the loops (DESIGN §7, §9); a read answers from durable state only.
struct AdminAPI {
    let plane: ControlPlane

    func handle(_ head: RequestHead, body: [UInt8], reply: AdminReply) {
        if head.path == "/healthz" {
            do {
                try allow(head, "GET", "HEAD")
                // Degraded still answers 200: the hub serves its connected clients from memory, so a
                // load balancer should keep it; only changes are refused until Redis is back.
                var health: JSONObject = ["status": .string(plane.log.isDegraded ? "degraded" : "ok")]
                if let cluster = plane.log.status { health["cluster"] = cluster }
                reply.json(200, .object(health))
            } catch {
                reply.error(error)
            }
            return
        }
        if ConsoleRoutes.isConsole(head.path) {
            // The page and its modules hold no data: every call they make presents the token.
            return reply(ConsoleRoutes.answer(head))
        }
        let token = authenticate(head)
        let audited = AuditLog.reply(for: head, body: body, token: token, plane: plane, sending: reply)
        do throws(AdminError) {
            guard let token else {
                var response = Response.error(
                    401, code: "unauthorized",
                    message: "send Authorization: Bearer <token>; the root token is in admin.token in the data dir")
                response.headers.append(name: "WWW-Authenticate", value: "Bearer")
                return audited(response)
            }
            let needed = AdminScope.required(method: head.method, path: head.path)
            guard token.allows(needed) else {
                let has = token.scopes.sorted().map(\.rawValue).joined(separator: ", ")
                throw AdminError(
                    403, "forbidden",
                    "\(head.method) \(head.path) needs the \(needed.rawValue) scope; token \(token.name) has \(has)")
            }
            try route(head, token: token, body: body, reply: audited)
        } catch {
            audited.error(error)
        }
    }

    private func route(_ head: RequestHead, token: AdminToken, body: [UInt8], reply: AdminReply) throws(AdminError) {
        let path = String(head.path)
        try refuseUnknownParameters(head, known: Self.parameters(method: head.method, path: path))
        switch path {
        case "/v1/stats":
            try allow(head, "GET")
            plane.afterCommit { reply.json(200, statsJSON()) }
        case "/v1/whoami":
            try allow(head, "GET")
            reply.json(200, token.whoAmI)
        case "/v1/audit":
            try allow(head, "GET")
            try AuditRoutes(plane: plane, reply: reply).recent(head)
        case "/metrics":
            try allow(head, "GET")
            var headers = HeaderFields()
            headers.append(name: "Content-Type", value: "text/plain; version=0.0.4")
            reply(Response(status: 200, headers: headers, body: Array(plane.metrics.prometheusText().utf8)))
        case "/v1/screens":
            try allow(head, "GET")
            ScreenRoutes(plane: plane, reply: reply).list()
        case "/v1/syncs":
            try allow(head, "GET", "POST")
            let syncs = SyncRoutes(plane: plane, reply: reply)
            try head.method == "GET" ? syncs.list(head) : syncs.send(body)
        case "/v1/clients":
            try allow(head, "GET")
            SyncRoutes(plane: plane, reply: reply).clients(head)
        case "/v1/clients/summary":
            try allow(head, "GET")
            SyncRoutes(plane: plane, reply: reply).clientSummary()
        case "/v1/cohorts":
            try allow(head, "GET")
            CohortRoutes(plane: plane, reply: reply).list()
        case "/v1/experiments":
            try allow(head, "GET")
            ExperimentRoutes(plane: plane, reply: reply).list()
        default:
            if path.hasPrefix("/v1/screens/") {
                return try ScreenRoutes(plane: plane, reply: reply).handle(
                    head, name: RequestHead.percentDecoded(path.dropFirst("/v1/screens/".count)), body: body)
            }
            if path.hasPrefix("/v1/syncs/") {
                try allow(head, "GET")
                return SyncRoutes(plane: plane, reply: reply).status(String(path.dropFirst("/v1/syncs/".count)))
            }
            if path.hasPrefix("/v1/experiments/") {
                return try ExperimentRoutes(plane: plane, reply: reply).handle(
                    head, path: String(path.dropFirst("/v1/experiments/".count)), body: body)
            }
            if path == "/v1/tokens" || path.hasPrefix("/v1/tokens/") {
                return try TokenRoutes(plane: plane, reply: reply).handle(head, path: path, body: body)
            }
            if path.hasPrefix("/v1/cohorts/") {
                return try CohortRoutes(plane: plane, reply: reply).handle(
                    head, path: String(path.dropFirst("/v1/cohorts/".count)), body: body)
            }
            throw AdminError.notFound("no admin route \(head.method) \(path)")
        }
    }

    func statsJSON() -> JSONValue {
        let metrics = plane.metrics
        let view = plane.state.view
        return .object([
            "connections": .number(Double(metrics.openConnections.load(ordering: .relaxed))),
            "websocket_connections": .number(Double(metrics.webSocketConnections.load(ordering: .relaxed))),
            "messages_in": .number(Double(metrics.messagesIn.load(ordering: .relaxed))),
            "messages_out": .number(Double(metrics.messagesOut.load(ordering: .relaxed))),
            "screens": .number(Double(view.screens.count)),
            "sessions": .number(Double(metrics.sessions.load(ordering: .relaxed))),
            "subscriptions": .number(Double(metrics.subscriptions.load(ordering: .relaxed))),
            "sync_seq": .number(Double(view.syncs.lastSeq)),
            "client_listen": .string(plane.clientAddress.description),
            "client_tls": .bool(plane.config.tls != nil),
            "loops": .number(Double(plane.config.effectiveLoops)),
            "memory_bytes": ProcessMemory.residentBytes().map { .number(Double($0)) } ?? .null,
            "cluster": plane.log.status ?? .null,
        ])
    }

    /// The query parameters a route takes; any other is refused (DESIGN §14: `?app_verison=` must
    /// not quietly answer for the latest version).
    static func parameters(method: String, path: String) -> [String] {
        switch (method, path) {
        case ("GET", "/v1/clients"): ["user"]
        case ("GET", "/v1/audit"), ("GET", "/v1/syncs"): ["limit"]
        case ("PUT", _) where path.hasPrefix("/v1/screens/"): ["dry_run"]
        case ("GET", _) where path.hasPrefix("/v1/screens/") && path.hasSuffix("/diff"): ["from", "to"]
        case ("GET", _) where path.hasPrefix("/v1/screens/") && !path.hasSuffix("/history"):
            ["user", "device", "platform", "app_version"]
        case ("GET", _) where path.hasPrefix("/v1/experiments/") && path.hasSuffix("/assignment"):
            ["unit", "platform", "app_version"]
        default: []
        }
    }

    private func refuseUnknownParameters(_ head: RequestHead, known: [String]) throws(AdminError) {
        for (name, _) in head.query where !known.contains(name) {
            let hint = NearestName.suggest(name, among: known).map { " (did you mean \($0)?)" } ?? ""
            let accepted = known.isEmpty ? "it takes none" : "it takes \(known.joined(separator: ", "))"
            throw AdminError(
                400, "unknown_parameter", "\(head.method) \(head.path) has no query parameter \"\(name)\"\(hint); \(accepted)")
        }
    }

    /// Refuses other methods with 405 and `Allow`.
    func allow(_ head: RequestHead, _ methods: String...) throws(AdminError) {
        guard methods.contains(head.method) else { throw AdminError.methodNotAllowed(head, accepts: methods) }
    }

    /// The token a request presents: the root token (compared in constant time) or a named one
    /// (found by the SHA-256 of what was presented); nil when neither.
    private func authenticate(_ head: RequestHead) -> AdminToken? {
        guard let value = head.headers["Authorization"], value.hasPrefix("Bearer ") else { return nil }
        let presented = String(value.dropFirst(7))
        if JWTVerifier.constantTimeEquals(Array(presented.utf8), Array(plane.adminToken.utf8)) { return .root() }
        return plane.state.adminToken(presented: presented)
    }

}
