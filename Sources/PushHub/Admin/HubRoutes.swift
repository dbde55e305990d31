import WSProtocol

/// The hub's own state: `/healthz` (for load balancers, without a token), `/v1/stats` and
/// `/metrics` (Prometheus text).
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
                "memory_bytes": ProcessMemory.residentBytes().map { .number(Double($0)) } ?? .null,
                "cluster": plane.log.status ?? .null,
            ]))
    }

    func metrics() {
        var headers = HeaderFields()
        headers.append(name: "Content-Type", value: "text/plain; version=0.0.4")
        let text =
            plane.metrics.prometheusText() + plane.releaseMetricsText()
            + plane.webhooks.metrics.exposition(
                plane.committed.webhooks, renderErrorsDropped: plane.renderErrors.overflowed)
        call.reply(Response(status: 200, headers: headers, body: Array(text.utf8)))
    }
}
