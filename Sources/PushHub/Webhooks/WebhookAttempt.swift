/// How one attempt to deliver an event to a webhook ended, as the journal keeps it: the
/// delivering hub decides, every hub applies it (DESIGN §18).
struct WebhookAttempt: Sendable, Equatable {
    enum Outcome: Sendable, Equatable {
        case delivered
        /// Try again, not before this (Unix milliseconds).
        case retry(at: Int)
        /// Given up: 24 hours passed since the event.
        case failed
    }

    let webhook: String
    let event: String
    let outcome: Outcome
    /// The answer's status (nil: none came).
    let status: Int?
    let error: String?
    /// Unix milliseconds.
    let at: Int

    var json: JSONObject {
        var members: JSONObject = [
            "webhook": .string(webhook), "event": .string(event), "at": .number(Double(at)),
            "status": status.map { .number(Double($0)) } ?? .null, "error": error.map(JSONValue.string) ?? .null,
        ]
        switch outcome {
        case .delivered: members["outcome"] = .string("delivered")
        case .failed: members["outcome"] = .string("failed")
        case .retry(let time):
            members["outcome"] = .string("retry")
            members["next_attempt_at"] = .number(Double(time))
        }
        return members
    }

    init(webhook: String, event: String, outcome: Outcome, status: Int?, error: String?, at: Int) {
        self.webhook = webhook
        self.event = event
        self.outcome = outcome
        self.status = status
        self.error = error
        self.at = at
    }

    init(json: JSONValue) throws(HubRecord.DecodingError) {
        guard let webhook = json["webhook"]?.stringValue, let event = json["event"]?.stringValue,
            let at = json["at"]?.intValue, let outcome = json["outcome"]?.stringValue
        else { throw HubRecord.DecodingError(description: "webhook_attempt needs webhook, event, at and outcome") }
        switch outcome {
        case "delivered": self.outcome = .delivered
        case "failed": self.outcome = .failed
        case "retry":
            guard let time = json["next_attempt_at"]?.intValue else {
                throw HubRecord.DecodingError(description: "a webhook_attempt to retry needs next_attempt_at")
            }
            self.outcome = .retry(at: time)
        default: throw HubRecord.DecodingError(description: "unknown webhook_attempt outcome \(outcome)")
        }
        self.webhook = webhook
        self.event = event
        self.at = at
        status = json["status"]?.intValue
        error = json["error"]?.stringValue
    }
}
