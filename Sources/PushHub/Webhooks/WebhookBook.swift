/// Every webhook and its queue, in the hub state (DESIGN §18): changed only by `WebhookRecord`s,
/// so every hub replaying the journal holds the same queues, and a restart after `kill -9` finds
/// every event not yet delivered.
///
/// Invariant: each queue holds at most `queueLimit` pending events.
struct WebhookBook: Sendable {
    static let defaultQueueLimit = 10_000

    private(set) var queues: [String: WebhookQueue] = [:]
    let queueLimit: Int
    /// Counts the records applied: a book whose generation did not move has not changed.
    private(set) var generation = 0

    /// - Parameter generation: where `generation` starts: a book that replaces another (a state
    ///   reloaded) continues its count, so a dispatcher never takes it for the one it scanned.
    init(queueLimit: Int = WebhookBook.defaultQueueLimit, generation: Int = 0) {
        self.queueLimit = queueLimit
        self.generation = generation
    }

    /// Whether some webhook wants events of `type` (else none is made).
    func wants(_ type: WebhookEventType) -> Bool { queues.values.contains { $0.webhook.wants(type) } }

    mutating func apply(_ record: WebhookRecord) {
        generation &+= 1
        switch record {
        case .put(let webhook):
            if queues[webhook.name] == nil {
                queues[webhook.name] = WebhookQueue(webhook: webhook)
            } else {
                queues[webhook.name]!.webhook = webhook
            }
        case .deleted(let name):
            queues[name] = nil
        case .event(let event):
            for name in queues.keys where queues[name]!.webhook.wants(event.type) {
                queues[name]!.enqueue(event, limit: queueLimit, at: event.time)
            }
        case .attempt(let attempt):
            queues[attempt.webhook]?.note(attempt)
        case .queued(let webhook, let delivery):
            queues[webhook]?.restore(delivery)
        case .counters(let webhook, let counters):
            queues[webhook]?.counters = counters
        }
    }

    /// Records that rebuild the book: each webhook, its counters, its recent and pending
    /// deliveries (in order).
    func snapshotRecords() -> [WebhookRecord] {
        var records: [WebhookRecord] = []
        for name in queues.keys.sorted() {
            let queue = queues[name]!
            records.append(.put(queue.webhook))
            records.append(.counters(webhook: name, queue.counters))
            for delivery in queue.recent + queue.pending { records.append(.queued(webhook: name, delivery)) }
        }
        return records
    }
}
