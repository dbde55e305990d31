/// One event on its way to one webhook, or how its way ended (DESIGN §18:
/// `GET /v1/webhooks/{name}/deliveries`).
struct WebhookDelivery: Sendable, Equatable {
    enum State: String, Sendable {
        case pending, delivered, failed, dropped
    }

    /// The whole event while it is pending; once finished only what the listing shows is kept
    /// (`data` is dropped).
    var event: WebhookEvent
    var state: State = .pending
    var attempts = 0
    /// The last attempt's HTTP status (nil: none, or no answer).
    var lastStatus: Int?
    var lastError: String?
    /// Unix milliseconds.
    var lastAttemptAt: Int?
    /// Not before (Unix milliseconds); nil: as soon as its subject allows.
    var nextAttemptAt: Int?
    var finishedAt: Int?

    /// The event and the delivery's fields, as the journal and the listing show them.
    var json: JSONValue {
        .object([
            "id": .string(event.id), "type": .string(event.type.rawValue), "subject": .string(event.subject),
            "time": .number(Double(event.time)), "state": .string(state.rawValue),
            "attempts": .number(Double(attempts)), "last_status": lastStatus.map { .number(Double($0)) } ?? .null,
            "last_error": lastError.map(JSONValue.string) ?? .null,
            "next_attempt_at": nextAttemptAt.map { .number(Double($0)) } ?? .null,
            "delivered_at": state == .delivered ? finishedAt.map { .number(Double($0)) } ?? .null : .null,
            "finished_at": finishedAt.map { .number(Double($0)) } ?? .null,
        ])
    }

    /// The journal's form: `json` with the last attempt's time, and the event's data while pending.
    var storedJSON: JSONValue {
        guard case .object(var members) = json else { return json }
        members["last_attempt_at"] = lastAttemptAt.map { .number(Double($0)) } ?? .null
        if state == .pending { members["data"] = .object(event.data) }
        return .object(members)
    }

    init(event: WebhookEvent) { self.event = event }

    init(stored json: JSONValue) throws(HubRecord.DecodingError) {
        var eventJSON = json
        if json["data"] == nil, case .object(var members) = json {
            members["data"] = .object([:])
            eventJSON = .object(members)
        }
        event = try WebhookEvent(json: eventJSON)
        guard let stateName = json["state"]?.stringValue, let state = State(rawValue: stateName),
            let attempts = json["attempts"]?.intValue
        else { throw HubRecord.DecodingError(description: "a webhook delivery needs state and attempts") }
        self.state = state
        self.attempts = attempts
        lastStatus = json["last_status"]?.intValue
        lastError = json["last_error"]?.stringValue
        nextAttemptAt = json["next_attempt_at"]?.intValue
        finishedAt = json["finished_at"]?.intValue
        lastAttemptAt = json["last_attempt_at"]?.intValue
    }

    /// The same delivery finished as `state` at `time`, without the event's data.
    func finished(_ state: State, at time: Int) -> WebhookDelivery {
        var done = self
        done.state = state
        done.finishedAt = time
        done.nextAttemptAt = nil
        done.event = WebhookEvent(id: event.id, type: event.type, subject: event.subject, time: event.time, data: [:])
        return done
    }
}
