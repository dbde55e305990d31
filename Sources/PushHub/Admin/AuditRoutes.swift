/// `GET /v1/audit[?limit=N]`: the audit log's recent entries, newest first (the console's Hub
/// view). Needs only `read`; what it shows is what the log lines show (never a secret).
struct AuditRoutes: AdminHandlers {
    let call: AdminCall

    init(_ call: AdminCall) { self.call = call }

    /// 100 entries unless asked for more: a page's worth.
    static let defaultLimit = 100

    func recent() throws(AdminError) {
        let plane = call.plane
        let limit = try call.limit(default: Self.defaultLimit, max: plane.audit.capacity)
        let entries = plane.audit.recent(limit)
        call.reply.json(
            200,
            .object([
                "entries": .array(entries.map(\.json)), "capacity": .number(Double(plane.audit.capacity)),
            ]))
    }
}
