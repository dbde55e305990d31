/// One webhook as the hub state holds it: its definition, the events waiting for it in the order
/// they were made, the last deliveries that ended, and its counters (DESIGN §18).
///
/// Invariants: `pending` holds each event at most once, in the order the journal made them, all
/// in state `.pending`; it never holds more than the book's queue limit (the oldest goes first,
/// counted in `dropped`); `recent` holds the last `recentLimit` finished deliveries, oldest first.
struct WebhookQueue: Sendable {
    struct Counters: Sendable, Equatable {
        var delivered = 0
        var failed = 0
        var dropped = 0
        /// Attempts that did not deliver and were followed by another.
        var retried = 0
    }

    static let recentLimit = 100

    var webhook: Webhook
    private(set) var pending = ChunkedList<WebhookDelivery>()
    private(set) var recent: [WebhookDelivery] = []
    var counters = Counters()
    /// The last attempt's (of any event): for the webhook's summary.
    private(set) var lastAttempt: WebhookDelivery?

    init(webhook: Webhook) { self.webhook = webhook }

    /// Queues `event`; beyond `limit` pending, the oldest is dropped.
    mutating func enqueue(_ event: WebhookEvent, limit: Int, at time: Int) {
        pending.append(WebhookDelivery(event: event))
        while pending.count > limit, let oldest = pending.removeFirst() {
            counters.dropped += 1
            remember(oldest.finished(.dropped, at: time))
        }
    }

    /// Notes an attempt's outcome on its event (nothing when the event is no longer pending: it
    /// was dropped, or another attempt's outcome came first).
    mutating func note(_ attempt: WebhookAttempt) {
        var noted: WebhookDelivery?
        pending.update(first: { $0.event.id == attempt.event }) { delivery in
            delivery.attempts += 1
            delivery.lastStatus = attempt.status
            delivery.lastError = attempt.error
            delivery.lastAttemptAt = attempt.at
            if case .retry(let time) = attempt.outcome { delivery.nextAttemptAt = time }
            noted = delivery
            return attempt.outcome != .delivered && attempt.outcome != .failed
        }
        guard let noted else { return }
        let ended: WebhookDelivery.State
        switch attempt.outcome {
        case .retry:
            counters.retried += 1
            lastAttempt = noted
            return
        case .delivered:
            counters.delivered += 1
            ended = .delivered
        case .failed:
            counters.failed += 1
            ended = .failed
        }
        let finished = noted.finished(ended, at: attempt.at)
        lastAttempt = finished
        remember(finished)
    }

    /// Restores a delivery a snapshot holds: a pending one at the queue's end, a finished one
    /// among the recent ones.
    mutating func restore(_ delivery: WebhookDelivery) {
        if delivery.state == .pending { pending.append(delivery) } else { remember(delivery) }
        if let at = delivery.lastAttemptAt, at >= lastAttempt?.lastAttemptAt ?? .min { lastAttempt = delivery }
    }

    private mutating func remember(_ finished: WebhookDelivery) {
        recent.append(finished)
        if recent.count > Self.recentLimit { recent.removeFirst(recent.count - Self.recentLimit) }
    }

    /// The summary a GET shows.
    var json: JSONValue {
        var members = webhook.json
        members["queued"] = .number(Double(pending.count))
        members["delivered"] = .number(Double(counters.delivered))
        members["failed"] = .number(Double(counters.failed))
        members["dropped"] = .number(Double(counters.dropped))
        members["retried"] = .number(Double(counters.retried))
        members["last_status"] = lastAttempt?.lastStatus.map { .number(Double($0)) } ?? .null
        members["last_error"] = lastAttempt?.lastError.map(JSONValue.string) ?? .null
        members["last_attempt_at"] = lastAttempt?.lastAttemptAt.map { .number(Double($0)) } ?? .null
        return .object(members)
    }
}
