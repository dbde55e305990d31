import WSProtocol

/// The admin HTTP API (DESIGN §7): routes a request to its handler and answers.
///
/// Invariants: every route but `/healthz` requires `Authorization: Bearer <admin token>`
/// (compared in constant time); every error is `{"error":{"code","message"}}` with its status.
/// Handlers run on the loop that read the request and must not block.
public struct AdminAPI: Sendable {
    let adminToken: String
    let metrics: Metrics

    public init(adminToken: String, metrics: Metrics) {
        self.adminToken = adminToken
        self.metrics = metrics
    }

    public func handle(_ head: RequestHead, body: [UInt8]) -> Response {
        let path = head.path
        if path == "/healthz" {
            guard head.method == "GET" || head.method == "HEAD" else { return methodNotAllowed(head, allowed: "GET") }
            return .json(200, #"{"status":"ok"}"#)
        }
        guard isAuthorized(head) else {
            var response = Response.error(
                401, code: "unauthorized",
                message: "send Authorization: Bearer <token>; the token is in admin.token in the data dir")
            response.headers.append(name: "WWW-Authenticate", value: "Bearer")
            return response
        }
        switch path {
        case "/v1/stats":
            guard head.method == "GET" else { return methodNotAllowed(head, allowed: "GET") }
            return .json(200, statsJSON())
        case "/metrics":
            guard head.method == "GET" else { return methodNotAllowed(head, allowed: "GET") }
            var headers = HeaderFields()
            headers.append(name: "Content-Type", value: "text/plain; version=0.0.4")
            return Response(status: 200, headers: headers, body: Array(metrics.prometheusText().utf8))
        default:
            return .error(404, code: "not_found", message: "no admin route \(head.method) \(path)")
        }
    }

    func statsJSON() -> String {
        let connections = metrics.openConnections.load(ordering: .relaxed)
        let webSockets = metrics.webSocketConnections.load(ordering: .relaxed)
        let messagesIn = metrics.messagesIn.load(ordering: .relaxed)
        let messagesOut = metrics.messagesOut.load(ordering: .relaxed)
        return
            #"{"connections":\#(connections),"websocket_connections":\#(webSockets),"messages_in":\#(messagesIn),"messages_out":\#(messagesOut)}"#
    }

    private func methodNotAllowed(_ head: RequestHead, allowed: String) -> Response {
        var response = Response.error(
            405, code: "method_not_allowed", message: "\(head.path) accepts \(allowed), not \(head.method)")
        response.headers.append(name: "Allow", value: allowed)
        return response
    }

    private func isAuthorized(_ head: RequestHead) -> Bool {
        guard let value = head.headers["Authorization"], value.hasPrefix("Bearer ") else { return false }
        return Self.constantTimeEquals(Array(value.utf8.dropFirst(7)), Array(adminToken.utf8))
    }

    /// Compares without an early exit, so timing does not reveal how much of a token matched.
    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<a.count { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
