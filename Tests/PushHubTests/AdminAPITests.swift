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

/// The order in which `AdminAPI` refuses a request, each check read from the route table.
@Suite struct AdminAPIRefusalOrderTests: AdminRequests {
    let plane: ControlPlane

    init() {
        plane = Self.makePlane()
        addToken("viewer", [.read])
        tick()
    }

    func refusal(_ method: String, _ target: String, token: String? = "s-viewer") -> (Int, String?)? {
        answer(request(method, target, token: token), body: "{}").map { ($0.status, $0.errorCode) }
    }

    @Test("401 first (but on an open path), then 404, 405, 403, 400 unknown_parameter, 422, then the route")
    func order() {
        #expect(refusal("DELETE", "/v1/nothing?x=1", token: nil)! == (401, "unauthorized"))
        #expect(refusal("POST", "/healthz", token: nil)! == (405, "method_not_allowed"))
        // A path no route has is a 404 whatever the token's scope or the query: no scope would do.
        #expect(refusal("DELETE", "/v1/nothing?x=1")! == (404, "not_found"))
        #expect(refusal("DELETE", "/v1/stats?x=1")! == (405, "method_not_allowed"))
        #expect(refusal("PUT", "/v1/screens/BAD?x=1")! == (403, "forbidden"))
        #expect(refusal("GET", "/v1/screens/BAD?x=1")! == (400, "unknown_parameter"))
        #expect(refusal("GET", "/v1/screens/BAD")! == (422, "invalid_screen_name"))
        #expect(refusal("GET", "/v1/screens/home")! == (404, "not_found"))  // the route's own answer
    }

    @Test("the query parameters are the route's the decoded path names: a percent-encoded /diff takes from")
    func percentEncodedAction() {
        // It used to be checked against the path as sent, as a GET of the screen: 400 unknown_parameter.
        #expect(refusal("GET", "/v1/screens/home%2Fdiff?from=1")! == (404, "not_found"))
    }

    @Test("a dry-run query is a dry run only where the route has one: elsewhere the refusal is audited")
    func dryRunOnlyWhereDeclared() {
        plane.audit = AuditRing()
        #expect(
            refusal("DELETE", "/v1/screens/home?dry_run=true", token: "secret-token")! == (400, "unknown_parameter"))
        #expect(plane.audit.count == 1)
    }

    @Test("/healthz answers GET and HEAD without a token; its 405 names both")
    func health() {
        #expect(handle(request("HEAD", "/healthz")).status == 200)
        #expect(handle(request("GET", "/healthz?probe=1")).status == 200)
        #expect(handle(request("DELETE", "/healthz")).headers["Allow"] == "GET, HEAD")
        #expect(handle(request("HEAD", "/v1/stats", token: "secret-token")).headers["Allow"] == "GET")
    }
}
