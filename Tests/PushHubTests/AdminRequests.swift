import WSProtocol

@testable import PushHub

/// What the admin API's unit tests share: a control plane without loops or a data dir (token
/// `secret-token`), requests to it, and its answers, which these routes give at once (nothing is
/// pending, no loop is asked).
protocol AdminRequests {
    var plane: ControlPlane { get }
}

extension AdminRequests {
    static func makePlane() -> ControlPlane {
        try! ControlPlane(
            config: HubConfig(), metrics: Metrics(), adminToken: "secret-token",
            clientAddress: SocketAddress(host: "127.0.0.1", port: 8080), dataDirectory: nil)
    }

    func handle(_ head: RequestHead) -> Response {
        var answer: Response?
        plane.handle(head, body: [], reply: AdminReply { answer = $0 })
        return answer!
    }

    func request(_ method: String, _ target: String, token: String? = nil, headers extra: [(String, String)] = [])
        -> RequestHead
    {
        var headers = HeaderFields([("Host", "admin")] + extra)
        if let token { headers.append(name: "Authorization", value: "Bearer \(token)") }
        return RequestHead(method: method, target: target, version: "HTTP/1.1", headers: headers)
    }
}
