/// The audit trail (DESIGN §9, §14): every admin call that changes something, and every call
/// refused for its token, is logged at info once answered — who (the token's name, never its
/// secret), what (method and path: the object), and the outcome (status, and the error code).
/// Reads and dry runs that succeed are not logged (dashboards poll them; the console's sync
/// composer sends a dry run as the target is edited). The recent entries are also kept in
/// `ControlPlane.audit` (`GET /v1/audit`, the console).
enum AuditLog {
    /// A reply that logs the answer (and keeps it in `plane.audit`) before sending it through
    /// `reply`: always when the call `changes` something, else only a refusal for its token.
    static func reply(
        for head: RequestHead, changes: Bool, token: AdminToken?, plane: ControlPlane, sending reply: AdminReply
    ) -> AdminReply {
        let send = { (response: Response) in
            if changes || response.status == 401 || response.status == 403 {
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
}
