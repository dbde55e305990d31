import Testing
import WSProtocol

@testable import PushHub

@Suite struct AdminAPITests {
    let api = AdminAPI(
        services: HubServices(
            config: HubConfig(), metrics: Metrics(),
            screens: try! ScreenStore(dataDirectory: nil), adminToken: "secret-token"))

    func request(_ method: String, _ target: String, token: String? = nil) -> RequestHead {
        var headers = HeaderFields([("Host", "admin")])
        if let token { headers.append(name: "Authorization", value: "Bearer \(token)") }
        return RequestHead(method: method, target: target, version: "HTTP/1.1", headers: headers)
    }

    @Test("/healthz needs no token; everything else does, and errors use the contract's shape")
    func auth() {
        #expect(api.handle(request("GET", "/healthz"), body: []).status == 200)
        let denied = api.handle(request("GET", "/v1/stats"), body: [])
        #expect(denied.status == 401)
        #expect(String(decoding: denied.body, as: UTF8.self).hasPrefix(#"{"error":{"code":"unauthorized","message":"#))
        #expect(api.handle(request("GET", "/v1/stats", token: "secret-tokeN"), body: []).status == 401)
        #expect(api.handle(request("GET", "/v1/stats", token: "secret-token"), body: []).status == 200)
        #expect(api.handle(request("GET", "/v1/nothing", token: "secret-token"), body: []).status == 404)
        #expect(api.handle(request("POST", "/healthz"), body: []).status == 405)
    }

    @Test("/metrics is Prometheus text")
    func metrics() {
        let response = api.handle(request("GET", "/metrics", token: "secret-token"), body: [])
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(text.contains("# TYPE pushhub_connections gauge\npushhub_connections 0\n"))
    }
}
