/// `/v1/syncs` and `/v1/clients` (DESIGN §5, §7): send a sync now (or spread), dry runs, receipts,
/// and who is connected.
///
/// Invariant: a sync is journaled (fsynced) before any client gets it and before the 2xx; its
/// `targeted_online` is what the loops targeted when it reached them.
struct SyncRoutes: AdminHandlers {
    let call: AdminCall

    init(_ call: AdminCall) { self.call = call }

    var plane: ControlPlane { call.plane }
    var reply: AdminReply { call.reply }

    static let maxHintBytes = 1024
    static let fields = [
        "target", "reason", "scope", "hint", "ttl", "spread", "collapse", "mandatory", "push", "dry_run",
    ]

    /// `POST /v1/syncs`: sends a sync, or with `"dry_run": true` counts whom it would reach.
    func send() throws(AdminError) {
        let request = try AdminBody.object(call.body, known: Self.fields)
        guard let targetJSON = request["target"] else { throw AdminError(400, "bad_target", "\"target\" is missing") }
        let target = try AdminError.mapping { () throws(InputError) in try Target(json: targetJSON) }
        if case .cohort(let name) = target.scope, call.state.view.cohorts[name] == nil {
            // A misspelt cohort reached nobody, silently. Cohorts that only come from the tokens'
            // `cohorts` claim are declared once with an empty user list.
            let known = Array(call.state.view.cohorts.keys)
            let hint = NearestName.suggest(name, among: known).map { " (did you mean \"\($0)\"?)" } ?? ""
            throw AdminError(
                404, "unknown_cohort",
                "no cohort named \"\(name)\"\(hint); a cohort that only comes from the tokens' cohorts claim is "
                    + "declared once with PUT /v1/cohorts/\(name) {\"users\":[]}")
        }
        let reason = try string(request, "reason", default: "sync")
        let scope = try string(request, "scope", default: "bundle")
        var hint: JSONValue?
        if let value = request["hint"], value != .null {
            guard case .object = value else { throw AdminError(400, "bad_hint", "\"hint\" must be an object") }
            let size = JSONWriter.write(value).count
            guard size <= Self.maxHintBytes else {
                throw AdminError(413, "hint_too_large", "\"hint\" is \(size) bytes; at most \(Self.maxHintBytes)")
            }
            hint = value
        }
        let ttl = try duration(request, "ttl", default: plane.config.syncTTL, max: .seconds(30 * 24 * 3600))
        let spread = try duration(request, "spread", default: .zero, max: .seconds(3600))
        let collapse = try optionalString(request, "collapse")
        let mandatory = try bool(request, "mandatory")
        let push = try pushMode(request)
        if try bool(request, "dry_run") {
            // Devices it would push: those registered that the target reaches (before those
            // connected when it is made are left out, for "offline").
            let registered = push == .none ? nil : call.state.devices.devices(for: target, in: call.state.view).count
            call.gather(.reach(target)) { [reply] answers in
                var connections = 0
                var users = Set<String>()
                for case .reach(let count, let names) in answers {
                    connections += count
                    users.formUnion(names)
                }
                var answer: JSONObject = [
                    "dry_run": .bool(true), "targeted_online": .number(Double(connections)),
                    "users": .number(Double(users.count)),
                ]
                if let registered { answer["push_devices"] = .number(Double(registered)) }
                reply.json(200, .object(answer))
            }
            return
        }
        let now = WallClock.nowMilliseconds()
        let sync = Sync(
            seq: call.state.view.syncs.lastSeq + 1, target: target, reason: reason, scope: scope, hint: hint,
            collapse: collapse, mandatory: mandatory, createdAt: now,
            expiresAt: now + Int(ttl.nanoseconds / 1_000_000), spreadMilliseconds: Int(spread.nanoseconds / 1_000_000),
            jitterMilliseconds: plane.config.syncJitterMilliseconds, push: push)
        call.commit([.syncAppended(sync)], gathering: true) { [plane] answers in
            var answer: JSONObject = [
                "id": .string(sync.id), "seq": .number(Double(sync.seq)),
                "targeted_online": .number(Double(answers.totalCount)),
            ]
            if push != .none { answer["push_queued"] = .number(Double(plane.push(sync, connected: answers))) }
            return .object(answer)
        }
    }

    /// `"push": "none" | "offline" | "always"` (DESIGN §17); one this hub cannot send is refused.
    private func pushMode(_ request: JSONValue) throws(AdminError) -> PushMode {
        guard let value = request["push"], value != .null else { return .none }
        guard let mode = value.stringValue.flatMap(PushMode.init(rawValue:)) else {
            throw AdminError(400, "bad_push", "\"push\" must be \"none\", \"offline\" or \"always\"")
        }
        if mode != .none, plane.pushes == nil {
            throw AdminError(
                400, "push_not_configured",
                "this hub has no push provider: start it with --apns-key/--apns-key-id/--apns-team or "
                    + "--fcm-credentials (docs/push.md)")
        }
        return mode
    }

    /// `GET /v1/syncs/{id}`: the sync with its receipts.
    func status() throws(AdminError) {
        let id = call.variable
        guard let sync = call.state.view.syncs.find(id) else {
            throw AdminError.notFound("no live sync \(id) (unknown or expired)")
        }
        call.gatherReceipts(seqs: [sync.seq]) { [plane, reply] receipts in
            reply.json(200, Self.status(sync, receipts[sync.seq] ?? ReceiptCounts(), since: plane.receiptsCountedSince))
        }
    }

    /// `GET /v1/clients[?user=U]`: the signed-in clients, gathered from every loop.
    func clients() {
        call.gather(.clients(user: call.query("user"))) { [reply] answers in
            var clients: [ClientAttributes] = []
            for case .clients(let some) in answers { clients += some }
            clients.sort { $0.connectedAt < $1.connectedAt }
            reply.json(200, .object(["clients": .array(clients.map(\.json)), "count": .number(Double(clients.count))]))
        }
    }

    // MARK: - Field readers that name the field at fault

    private func string(_ request: JSONValue, _ field: String, default value: String) throws(AdminError) -> String {
        try optionalString(request, field) ?? value
    }

    private func optionalString(_ request: JSONValue, _ field: String) throws(AdminError) -> String? {
        guard let value = request[field], value != .null else { return nil }
        guard let text = value.stringValue, !text.isEmpty else {
            throw AdminError(400, "bad_\(field)", "\"\(field)\" must be a non-empty string")
        }
        return text
    }

    private func bool(_ request: JSONValue, _ field: String) throws(AdminError) -> Bool {
        guard let value = request[field], value != .null else { return false }
        guard case .bool(let flag) = value else {
            throw AdminError(400, "bad_\(field)", "\"\(field)\" must be true or false")
        }
        return flag
    }

    /// A duration as a string (`30s`, `1h`, `7d`, `1h30m`: `DurationText`) or a number of seconds.
    private func duration(_ request: JSONValue, _ field: String, default value: Duration, max: Duration)
        throws(AdminError) -> Duration
    {
        guard let raw = request[field], raw != .null else { return value }
        let parsed: Duration?
        if let seconds = raw.numberValue, seconds >= 0 {
            // Checked against the limit before converting: 1e19 seconds would trap in Int64(...).
            parsed = seconds <= Double(max.components.seconds) ? .milliseconds(Int64(seconds * 1000)) : nil
        } else if let text = raw.stringValue {
            parsed = HubOptions.duration(text)
        } else {
            parsed = nil
        }
        guard let parsed, parsed <= max else {
            throw AdminError(
                400, "bad_\(field)",
                "\"\(field)\" must be a duration such as \"30s\", \"1h\" or \"7d\" (or seconds), at most "
                    + DurationText.describe(max))
        }
        return parsed
    }
}
