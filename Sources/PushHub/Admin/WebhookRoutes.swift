/// `/v1/webhooks…` (DESIGN §18): define, list, show and delete webhooks, list a webhook's
/// deliveries, and send it a test event. Every call needs the `admin` scope: a webhook's URL
/// receives the hub's events, and its secret signs them.
struct WebhookRoutes: AdminHandlers {
    let call: AdminCall

    init(_ call: AdminCall) { self.call = call }

    private var name: String { call.variable }

    /// A webhook name: `[a-z0-9._-]{1,100}`.
    static func validationError(_ name: String) -> String? { Identifier.validationError(name, kind: "a webhook name") }

    static let defaultDeliveries = 50
    static let maxDeliveries = 1000

    func list() {
        let book = call.state.webhooks
        reply.json(200, .object(["webhooks": .array(book.queues.keys.sorted().map { book.queues[$0]!.json })]))
    }

    func get() throws(AdminError) { reply.json(200, try queue().json) }

    /// `PUT /v1/webhooks/{name} {"url", "events", "secret"?}`: defines or replaces it. Without a
    /// secret, a new webhook gets one made here, shown in this answer only; a replaced one keeps
    /// its own.
    func put() throws(AdminError) {
        let request = try AdminBody.object(
            call.body, known: ["url", "events", "secret"],
            shape: "{\"url\": \"https://…\", \"events\": […], \"secret\"?: …}")
        guard let urlText = request["url"]?.stringValue else {
            throw AdminError(400, "bad_url", "a webhook needs \"url\": an https:// URL")
        }
        guard let names = request["events"]?.arrayValue, names.allSatisfy({ $0.stringValue != nil }) else {
            throw AdminError(400, "bad_events", "a webhook needs \"events\": an array of event types (or [\"*\"])")
        }
        let url = try AdminError.mapping { () throws(InputError) in try Webhook.parseURL(urlText) }
        let events = try AdminError.mapping { () throws(InputError) in
            try Webhook.parseEvents(names.compactMap(\.stringValue))
        }
        let existing = call.state.webhooks.queues[name]?.webhook
        var madeSecret: String?
        let secret: String
        switch request["secret"] {
        case nil, .null?:
            if let existing {
                secret = existing.secret
            } else {
                secret = Self.newSecret()
                madeSecret = secret
            }
        case .string(let given)?:
            try AdminError.mapping { () throws(InputError) in try Webhook.checkSecret(given) }
            secret = given
        default:
            throw AdminError(400, "bad_secret", "\"secret\" must be a string")
        }
        let now = WallClock.nowMilliseconds()
        let webhook = Webhook(
            name: name, url: url, events: events, secret: secret, createdAt: existing?.createdAt ?? now,
            updatedAt: now)
        call.commit([.webhook(.put(webhook))], status: existing == nil ? 201 : 200) { _ in
            var answer = webhook.json
            if let madeSecret { answer["secret"] = .string(madeSecret) }
            return .object(answer)
        }
    }

    func delete() throws(AdminError) {
        _ = try queue()
        call.commit([.webhook(.deleted(name))]) { [name] _ in .object(["name": .string(name), "deleted": .bool(true)]) }
    }

    /// `GET /v1/webhooks/{name}/deliveries[?limit=N]`: the pending ones in queue order, then the
    /// finished ones, newest first.
    func deliveries() throws(AdminError) {
        let limit = try call.limit(default: Self.defaultDeliveries, max: Self.maxDeliveries)
        let queue = try queue()
        let shown = (queue.pending + queue.recent.reversed()).prefix(limit)
        reply.json(
            200,
            .object([
                "webhook": .string(name), "queued": .number(Double(queue.pending.count)),
                "deliveries": .array(shown.map(\.json)),
            ]))
    }

    /// `POST /v1/webhooks/{name}/test`: one `webhook.test` event sent now (not queued, not
    /// retried); the answer says what the receiver did.
    func test() throws(AdminError) {
        let webhook = try queue().webhook
        let http = plane.outbound
        let event = WebhookEvent(
            type: .webhookTest, subject: "webhook:" + name, time: WallClock.nowMilliseconds(),
            data: ["webhook": .string(name)])
        let started = MonotonicClock.now()
        let reply = self.reply
        WebhookDispatcher.post(event, to: webhook, now: started, http: http) { status, error in
            reply.json(
                200,
                .object([
                    "id": .string(event.id), "status": status.map { .number(Double($0)) } ?? .null,
                    "error": error.map(JSONValue.string) ?? .null,
                    "duration_ms": .number(Double((MonotonicClock.now() - started) / 1_000_000)),
                ]))
        }
    }

    private func queue() throws(AdminError) -> WebhookQueue {
        guard let queue = call.state.webhooks.queues[name] else {
            throw AdminError.notFound("no webhook named \(name)")
        }
        return queue
    }

    /// "whsec_" and 32 base-62 characters (190 bits).
    static func newSecret() -> String {
        "whsec_" + (0..<3).map { _ in Session.newSessionID().dropFirst(2) }.joined().prefix(32)
    }
}
