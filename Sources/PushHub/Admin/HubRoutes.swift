import WSProtocol

/// The hub's own state: `/livez`, `/readyz` and `/healthz` (for load balancers and
/// orchestrators, without a token), `/v1/stats` and `/metrics` (Prometheus text).
struct HubRoutes: AdminHandlers {
    let call: AdminCall

    init(_ call: AdminCall) { self.call = call }

    /// `GET`/`HEAD /healthz`. Degraded still answers 200: the hub serves its connected clients
    /// from memory, so a load balancer should keep it; only changes are refused until Redis is back.
    func health() {
        var health: JSONObject = ["status": .string(plane.log.isDegraded ? "degraded" : "ok")]
        if let cluster = plane.log.status { health["cluster"] = cluster }
        call.reply.json(200, .object(health))
    }

    /// `GET`/`HEAD /livez`: the process answers (its control plane's loop turns). 200 while it
    /// drains and while Redis is away too: restarting it would not help.
    func live() {
        call.reply.json(200, .object(["status": .string("live")]))
    }

    /// `GET`/`HEAD /readyz`: 200 while the hub takes new clients, else 503 and why (`Readiness`).
    func ready() {
        let readiness = Readiness.of(plane)
        call.reply.json(readiness.httpStatus, readiness.body)
    }

    func stats() {
        let metrics = plane.metrics
        let view = call.state.view
        call.reply.json(
            200,
            .object([
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
                "memory_bytes": ProcessStatus.residentBytes().map { .number(Double($0)) } ?? .null,
                "cluster": plane.log.status ?? .null,
            ]))
    }

    func metrics() {
        var headers = HeaderFields()
        headers.append(name: "Content-Type", value: "text/plain; version=0.0.4")
        let text =
            Self.buildInfo
            + PrometheusText.family(
                "pushhub_ready", "gauge", "1 while /readyz answers 200 (the hub takes new clients).",
                Readiness.of(plane) == .ready ? "1" : "0")
            + plane.metrics.prometheusText() + plane.releaseMetricsText()
            + plane.webhooks.metrics.exposition(
                plane.committed.webhooks, renderErrorsDropped: plane.renderErrors.overflowed)
            + ProcessStatus.exposition()
        call.reply(Response(status: 200, headers: headers, body: Array(text.utf8)))
    }

    /// `pushhub_build_info{version,commit} 1`: which build each hub runs (a dashboard's table, a
    /// rollout's progress).
    static let buildInfo: String = {
        PrometheusText.header("pushhub_build_info", "gauge", "The hub's version and commit (always 1).")
            + "pushhub_build_info{version=\"\(PrometheusText.escaped(BuildInfo.version))\",commit=\"\(PrometheusText.escaped(BuildInfo.commit))\"} 1\n"
    }()
}
