import Testing
import WSProtocol

@testable import PushHub

@Suite struct AdminAPITests {
    let plane = try! ControlPlane(
        config: HubConfig(), metrics: Metrics(), adminToken: "secret-token",
        clientAddress: SocketAddress(host: "127.0.0.1", port: 8080), dataDirectory: nil)

    /// The answer, which these routes give at once (nothing is pending, no loop is asked).
    func handle(_ head: RequestHead) -> Response {
        var answer: Response?
        plane.handle(head, body: [], reply: AdminReply { answer = $0 })
        return answer!
    }

    func request(_ method: String, _ target: String, token: String? = nil) -> RequestHead {
        var headers = HeaderFields([("Host", "admin")])
        if let token { headers.append(name: "Authorization", value: "Bearer \(token)") }
        return RequestHead(method: method, target: target, version: "HTTP/1.1", headers: headers)
    }

    @Test("/healthz needs no token; everything else does, and errors use the contract's shape")
    func auth() {
        #expect(handle(request("GET", "/healthz")).status == 200)
        let denied = handle(request("GET", "/v1/stats"))
        #expect(denied.status == 401)
        #expect(String(decoding: denied.body, as: UTF8.self).hasPrefix(#"{"error":{"code":"unauthorized","message":"#))
        #expect(handle(request("GET", "/v1/stats", token: "secret-tokeN")).status == 401)
        #expect(handle(request("GET", "/v1/stats", token: "secret-token")).status == 200)
        #expect(handle(request("GET", "/v1/nothing", token: "secret-token")).status == 404)
        #expect(handle(request("POST", "/healthz")).status == 405)
    }

    @Test("/metrics is Prometheus text")
    func metrics() {
        let response = handle(request("GET", "/metrics", token: "secret-token"))
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(text.contains("# TYPE pushhub_connections gauge\npushhub_connections 0\n"))
    }
}
