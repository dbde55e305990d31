import WSProtocol

extension WebSocketConnection {
    /// The request on the client listener is in: one of the listener's plain HTTP answers
    /// (`Shard.answerHTTP`), a refusal (no endpoint at that path, a malformed upgrade, an origin,
    /// capacity or address refusal), or the 101 (RFC 6455 §4.2.2) and WebSocket from here. On
    /// `/v1/connect` the 101 opens a session in the loop's shard.
    func upgrade(_ head: RequestHead, rest: UnsafeMutableRawBufferPointer) {
        if let answer = loop.shard?.answerHTTP(head) {
            respondAndClose(answer)
            return
        }
        guard let endpoint = Endpoint.route(head.path, config: loop.config) else {
            loop.metrics.handshakesRejected.add(1, ordering: .relaxed)
            respondAndClose(.plain(404, "no WebSocket endpoint at \(head.path); connect to \(Endpoint.clientPath)"))
            return
        }
        let accepted: ServerHandshake.Accepted
        do {
            accepted = try ServerHandshake.accept(
                method: head.method, httpVersion: head.version, headers: head.headers,
                subprotocols: endpoint == .client ? Endpoint.subprotocols : [], compression: loop.config.compression)
        } catch {
            loop.metrics.handshakesRejected.add(1, ordering: .relaxed)
            respondAndClose(.plain(error.status, error.reason, headers: error.headers))
            return
        }
        var refusal: UpgradeAdmission.Refusal?
        if endpoint == .client {
            refusal = UpgradeAdmission.refusal(
                origin: head.headers["Origin"], open: loop.metrics.webSocketConnections.load(ordering: .relaxed),
                config: loop.config)
            if refusal == nil, !loop.admitAddress(of: self) { refusal = .address(loop.config.maxConnectionsPerAddress) }
        }
        if let refusal {
            loop.metrics.handshakesRejected.add(1, ordering: .relaxed)
            switch refusal {
            case .origin: loop.metrics.originRefusals.add(1, ordering: .relaxed)
            case .capacity: loop.metrics.capacityRefusals.add(1, ordering: .relaxed)
            case .address: loop.metrics.addressRefusals.add(1, ordering: .relaxed)
            }
            respondAndClose(refusal.response)
            return
        }
        var session: SessionSlot?
        if endpoint == .client {
            // A token may come on the upgrade instead of in hello (DESIGN §3).
            var upgradeToken: String?
            if let authorization = head.headers["Authorization"], authorization.hasPrefix("Bearer ") {
                upgradeToken = String(authorization.dropFirst("Bearer ".count))
            } else if let token = head.query.first(where: { $0.name == "token" })?.value {
                upgradeToken = token
            }
            session = loop.shard?.openSession(
                helloDeadline: loop.now + loop.config.helloTimeout.nanoseconds, upgradeToken: upgradeToken)
        }
        opened(endpoint, responseHead: accepted.responseHead, deflate: accepted.deflate, session: session, rest: rest)
    }
}
