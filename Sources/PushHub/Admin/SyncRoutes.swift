/// `/v1/syncs` and `/v1/clients` (DESIGN §5, §7): send a sync now (or spread), dry runs, receipts,
/// and who is connected.
///
/// Invariant: a sync is journaled (fsynced) before any client gets it and before the 2xx.
struct SyncRoutes {
    let services: HubServices

    static let maxHintBytes = 1024

    func send(_ body: [UInt8]) throws(AdminError) -> Response {
        let request: JSONValue
        do {
            request = try JSONReader.parse(body)
        } catch {
            throw AdminError.badJSON(error)
        }
        guard case .object = request else { throw AdminError(400, "bad_request", "the body must be a JSON object") }
        guard let targetJSON = request["target"] else { throw AdminError(400, "bad_target", "\"target\" is missing") }
        let target = try Target(json: targetJSON)
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
        let ttl = try duration(request, "ttl", default: services.config.syncTTL, max: .seconds(30 * 24 * 3600))
        let spread = try duration(request, "spread", default: .zero, max: .seconds(3600))
        let collapse = try optionalString(request, "collapse")
        let mandatory = try bool(request, "mandatory")
        let reached = services.online.resolve(target, cohorts: services.cohorts)
        if try bool(request, "dry_run") {
            return .json(
                200,
                JSONWriter.string(
                    .object([
                        "dry_run": .bool(true), "targeted_online": .number(Double(reached.count)),
                        "users": .number(Double(Set(reached.compactMap { $0.1.user }).count)),
                    ])))
        }
        let now = WallClock.nowMilliseconds()
        let sync: Sync
        do {
            sync = try services.syncs.append(now: now) { seq in
                Sync(
                    seq: seq, target: target, reason: reason, scope: scope, hint: hint, collapse: collapse,
                    mandatory: mandatory,
                    createdAt: now, expiresAt: now + Int(ttl.nanoseconds / 1_000_000),
                    spreadMilliseconds: Int(spread.nanoseconds / 1_000_000),
                    jitterMilliseconds: services.config.syncJitterMilliseconds)
            }
        } catch {
            throw AdminError(500, "storage_failed", "the sync could not be made durable: \(error)")
        }
        sync.receipts.targetedOnline.store(reached.count, ordering: .relaxed)
        // Spread: the i-th of n targets is due at start + spread × i / n, wherever it is connected.
        let start = MonotonicClock.now()
        var perLoop: [Int: [(token: UInt64, due: UInt64)]] = [:]
        for (i, (key, _)) in reached.enumerated() {
            let due = start + (reached.count > 1 ? spread.nanoseconds * UInt64(i) / UInt64(reached.count) : 0)
            perLoop[key.loop, default: []].append((key.token, due))
        }
        for (loop, deliveries) in perLoop { services.post(.deliverSync(sync, deliveries), toLoop: loop) }
        return .json(
            200,
            JSONWriter.string(
                .object([
                    "id": .string(sync.id), "seq": .number(Double(sync.seq)),
                    "targeted_online": .number(Double(reached.count)),
                ])))
    }

    func status(_ id: String) throws(AdminError) -> Response {
        guard let sync = services.syncs.find(id) else {
            throw AdminError.notFound("no live sync \(id) (unknown or expired)")
        }
        var members = sync.json.objectValue ?? JSONObject()
        members["id"] = .string(sync.id)
        members["receipts"] = .object([
            "targeted_online": .number(Double(sync.receipts.targetedOnline.load(ordering: .relaxed))),
            "delivered": .number(Double(sync.receipts.delivered.load(ordering: .relaxed))),
            "acked": .number(Double(sync.receipts.acked.load(ordering: .relaxed))),
        ])
        return .json(200, JSONWriter.string(.object(members)))
    }

    func clients(_ head: RequestHead) -> Response {
        let user = head.query.first { $0.name == "user" }?.value
        let clients = services.online.clients(user: user)
        return .json(
            200,
            JSONWriter.string(
                .object(["clients": .array(clients.map(\.json)), "count": .number(Double(clients.count))])))
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

    /// A duration as a string (`30s`, `1h`) or a number of seconds.
    private func duration(_ request: JSONValue, _ field: String, default value: Duration, max: Duration)
        throws(AdminError) -> Duration
    {
        guard let raw = request[field], raw != .null else { return value }
        let parsed: Duration?
        if let seconds = raw.numberValue, seconds >= 0 {
            parsed = .milliseconds(Int64(seconds * 1000))
        } else if let text = raw.stringValue {
            parsed = HubOptions.duration(text)
        } else {
            parsed = nil
        }
        guard let parsed, parsed <= max else {
            throw AdminError(
                400, "bad_\(field)", "\"\(field)\" must be a duration such as \"30s\" or \"1h\", at most \(max)")
        }
        return parsed
    }
}
