import WSProtocol

@testable import PushHub

/// What the admin API's unit tests share: a control plane without loops (token `secret-token`;
/// in memory unless given a data dir), requests to it, and its answers.
protocol AdminRequests {
    var plane: ControlPlane { get }
}

/// An answer that may come after the control plane's tick (a change, or a read waiting for one).
final class PendingAnswer {
    var response: Response?
}

extension AdminRequests {
    static func makePlane(dataDirectory: String? = nil) -> ControlPlane {
        try! ControlPlane(
            config: HubConfig(), metrics: Metrics(), adminToken: "secret-token",
            clientAddress: SocketAddress(host: "127.0.0.1", port: 8080), dataDirectory: dataDirectory)
    }

    /// The answer to a request these routes give at once (nothing is pending, no loop is asked).
    func handle(_ head: RequestHead) -> Response {
        var answer: Response?
        plane.handle(head, body: [], reply: AdminReply { answer = $0 })
        return answer!
    }

    /// Sends a request without ending the tick: a change, or a read after one, is answered by `tick()`.
    func send(_ head: RequestHead, body: String = "") -> PendingAnswer {
        let pending = PendingAnswer()
        plane.handle(head, body: Array(body.utf8), reply: AdminReply { pending.response = $0 })
        return pending
    }

    /// Ends the control plane's tick: what it changed is committed, then answered.
    func tick() { plane.tickEnded(now: MonotonicClock.now()) }

    /// Sends a request and ends the tick; the answer (nil: none came).
    func answer(_ head: RequestHead, body: String = "") -> Response? {
        let pending = send(head, body: body)
        tick()
        return pending.response
    }

    func request(_ method: String, _ target: String, token: String? = nil, headers extra: [(String, String)] = [])
        -> RequestHead
    {
        var headers = HeaderFields([("Host", "admin")] + extra)
        if let token { headers.append(name: "Authorization", value: "Bearer \(token)") }
        return RequestHead(method: method, target: target, version: "HTTP/1.1", headers: headers)
    }

    /// A named token with `scopes`, applied to the state but not yet committed; its secret is `s-<name>`.
    func addToken(_ name: String, _ scopes: Set<AdminScope>) {
        let token = AdminToken(name: name, scopes: scopes, digest: AdminToken.digest(of: "s-" + name), createdAt: 0)
        plane.mutate([.adminTokenCreated(token)], retry: nil) { _ in }
    }
}

extension AdminRequests {
    /// Whether the admin API counts `head` as a change (audited, run at once), as its route declares.
    static func changes(_ head: RequestHead, body: [UInt8]) -> Bool {
        AdminRouteTable.effect(of: head).changes(head, body: body)
    }
}
