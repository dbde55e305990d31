import Testing
import WSProtocol

@testable import PushHub

@Suite struct AdminAPITests: AdminRequests {
    let plane = AdminAPITests.makePlane()

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
