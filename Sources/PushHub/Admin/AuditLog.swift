/// The audit trail (DESIGN §9, §14): every admin call that changes something, and every call
/// refused for its token, is logged at info once answered — who (the token's name, never its
/// secret), what (method and path: the object), and the outcome (status, and the error code).
/// Reads and dry runs that succeed are not logged (dashboards poll them; the console's sync
/// composer sends a dry run as the target is edited). The recent entries are also kept in
/// `ControlPlane.audit` (`GET /v1/audit`, the console).
enum AuditLog {
    /// A reply that logs the answer (and keeps it in `plane.audit`) before sending it through `reply`.
    static func reply(
        for head: RequestHead, body: [UInt8], token: AdminToken?, plane: ControlPlane, sending reply: AdminReply
    ) -> AdminReply {
        let isRead = !mayChange(head, body: body)
        let send = { (response: Response) in
            if !isRead || response.status == 401 || response.status == 403 {
                var fields: [(String, any Sendable)] = [
                    ("token", token?.name ?? "-"), ("method", head.method), ("path", String(head.path)),
                    ("status", response.status),
                ]
                if let code = response.errorCode { fields.append(("error", code)) }
                Log.info("admin", fields)
                plane.audit.append(
                    AuditRing.Entry(
                        at: WallClock.nowMilliseconds(), token: token?.name ?? "-", method: head.method,
                        path: String(head.path), status: response.status, error: response.errorCode))
            }
            reply(response)
        }
        return AdminReply(send, retry: reply.retry)
    }

    /// Whether a request may change something: not a `GET` or `HEAD`, nor a dry run — a publish
    /// with `?dry_run=true` (or `1`) or a sync whose body says `"dry_run": true` — which only
    /// counts.
    static func mayChange(_ head: RequestHead, body: [UInt8]) -> Bool {
        if head.method == "GET" || head.method == "HEAD" { return false }
        if head.query.contains(where: { $0.name == "dry_run" && ($0.value == "true" || $0.value == "1") }) {
            return false
        }
        // A body that is not JSON is refused by its route with a 400, which is then not logged
        // either way; so `try?` loses nothing here.
        if head.method == "POST" && head.path == "/v1/syncs", let request = try? JSONReader.parse(body) {
            return request["dry_run"] != .bool(true)
        }
        return true
    }
}
