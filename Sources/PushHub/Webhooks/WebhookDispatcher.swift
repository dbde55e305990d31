import HTTP1

/// Delivers the webhooks' queues (DESIGN §18) from the committed state, on the control plane's
/// loop: each pending event is POSTed, signed, and the attempt's outcome is journaled
/// (`WebhookAttempt`), which is what moves the queue on every hub.
///
/// Order: an event is sent only when no earlier pending event of its subject waits on that
/// webhook (in flight, or waiting for its retry), so a receiver sees each subject's events in
/// the order they were made. Events of different subjects go side by side, at most
/// `maxInFlightPerWebhook` at once per webhook.
///
/// At least once: an event leaves its queue only when the outcome of an attempt that delivered
/// it is durable; until then it is in `inFlight` here (never sent twice at once), and after a
/// crash it is sent again with the same id.
///
/// Invariants: `inFlight` holds exactly the attempts sent and whose outcome is not yet durable
/// (or failed to be); `inFlightPerWebhook` counts them per webhook. Only one hub of a cluster
/// delivers (`isDeliverer`), so each event reaches each webhook from one hub.
final class WebhookDispatcher {
    private struct Key: Hashable {
        let webhook: String
        let event: String
    }

    static let maxInFlightPerWebhook = 16
    /// An attempt without a complete answer by then failed.
    static let attemptTimeout: UInt64 = 10_000_000_000
    /// Retries stop this long after the event was made (24 h).
    static let retryWindowMilliseconds = 24 * 3600 * 1000
    /// 1 s, doubling, up to 1 h; each delay between half and all of that (equal jitter).
    static let backoff = Backoff(initial: .seconds(1), cap: .seconds(3600))
    /// The most of a receiver's error body kept in the delivery record.
    static let errorBodyBytes = 200
    /// A receiver's answer is read up to this; a longer body fails the attempt (receivers answer
    /// with a status, not a document).
    static let maxAnswerBytes = 64 << 10

    let http: any HTTPFetching
    let metrics: WebhookMetrics
    /// Journals an attempt's outcome, then calls back (whether it became durable or not).
    var record: (WebhookAttempt, @escaping () -> Void) -> Void = { _, done in done() }
    /// A uniform random number in [0, 1), for the jitter.
    var random: () -> Double = { Double.random(in: 0..<1) }

    private var inFlight = Set<Key>()
    private var inFlightPerWebhook: [String: Int] = [:]
    /// An attempt ended, or the deliverer changed: look through the queues at the next tick.
    private var needsScan = true
    /// The book's generation the last scan saw (a new one: events came, outcomes were noted).
    private var scannedGeneration = -1
    /// The earliest retry time (Unix ms) seen waiting by the last scan.
    private var nextRetryAt: Int?
    private var wakeAt: UInt64?
    /// Whether the last tick found this hub the deliverer.
    private var delivered = true

    init(http: any HTTPFetching, metrics: WebhookMetrics) {
        self.http = http
        self.metrics = metrics
    }

    /// When `tick` must run: at once when this hub delivers and something changed in `book`
    /// or an attempt ended; else at the next retry (or the next look, for another hub).
    func nextDeadline(book: WebhookBook) -> UInt64? {
        if delivered && (needsScan || book.generation != scannedGeneration) { return 0 }
        return wakeAt
    }

    /// Sends what may go now. `wallNow`: Unix milliseconds.
    func tick(book: WebhookBook, isDeliverer: Bool, now: UInt64, wallNow: Int) {
        if book.generation != scannedGeneration { needsScan = true }
        delivered = isDeliverer
        guard isDeliverer else {
            // Another hub delivers; look again in a second in case it stops.
            wakeAt = book.queues.values.contains { !$0.pending.isEmpty } ? now + 1_000_000_000 : nil
            return
        }
        if !needsScan, let due = nextRetryAt, due > wallNow {
            wakeAt = now + UInt64(due - wallNow) * 1_000_000
            return
        }
        if !needsScan && nextRetryAt == nil {
            wakeAt = nil
            return
        }
        needsScan = false
        scannedGeneration = book.generation
        nextRetryAt = nil
        for name in book.queues.keys.sorted() { scan(book.queues[name]!, now: now, wallNow: wallNow) }
        wakeAt = nextRetryAt.map { now + UInt64(max(0, $0 - wallNow)) * 1_000_000 }
    }

    private func scan(_ queue: WebhookQueue, now: UInt64, wallNow: Int) {
        let name = queue.webhook.name
        var seenSubjects = Set<String>()
        for delivery in queue.pending {
            guard inFlightPerWebhook[name, default: 0] < Self.maxInFlightPerWebhook else { return }
            let subject = delivery.event.subject
            // An earlier event of this subject is still pending: this one waits for it.
            guard seenSubjects.insert(subject).inserted else { continue }
            let key = Key(webhook: name, event: delivery.event.id)
            if inFlight.contains(key) { continue }
            if let due = delivery.nextAttemptAt, due > wallNow {
                nextRetryAt = min(nextRetryAt ?? due, due)
                continue
            }
            send(delivery, to: queue.webhook, key: key, now: now)
        }
    }

    private func send(_ delivery: WebhookDelivery, to webhook: Webhook, key: Key, now: UInt64) {
        inFlight.insert(key)
        inFlightPerWebhook[webhook.name, default: 0] += 1
        let event = delivery.event
        let started = now
        Self.post(event, to: webhook, now: now, http: http) { [weak self] status, error in
            guard let self else { return }
            let at = WallClock.nowMilliseconds()
            let outcome: WebhookAttempt.Outcome
            if let status, (200..<300).contains(status) {
                outcome = .delivered
                metrics.noteDelivered(secondsSinceEvent: Double(max(0, at - event.time)) / 1000)
            } else if at >= event.time + Self.retryWindowMilliseconds {
                outcome = .failed
            } else {
                let ceiling = Self.backoff.ceiling(attempt: delivery.attempts)
                let delay = ceiling / 2 + (ceiling / 2) * random()
                let retryAt = at + Int(delay.nanoseconds / 1_000_000)
                outcome = .retry(at: min(retryAt, event.time + Self.retryWindowMilliseconds))
            }
            metrics.noteAttempt(took: MonotonicClock.now() - started)
            let attempt = WebhookAttempt(
                webhook: webhook.name, event: event.id, outcome: outcome, status: status, error: error, at: at)
            record(attempt) { [weak self] in
                guard let self else { return }
                inFlight.remove(key)
                inFlightPerWebhook[webhook.name, default: 1] -= 1
                needsScan = true
            }
        }
    }

    /// POSTs `event` to `webhook`, signed now, and reports the status (nil: no answer) and, for
    /// a failure, why (the start of the receiver's body, or the connection's problem).
    static func post(
        _ event: WebhookEvent, to webhook: Webhook, now: UInt64, http: any HTTPFetching,
        done: @escaping (_ status: Int?, _ error: String?) -> Void
    ) {
        let body = event.body
        let signature = WebhookSignature.value(
            body: body, secret: webhook.secret, seconds: WallClock.nowMilliseconds() / 1000)
        let request = HTTP1Request(
            method: "POST", target: webhook.url.target,
            headers: [
                ("Content-Type", "application/json"), ("User-Agent", "PushHub/\(BuildInfo.version)"),
                ("PushHub-Event", event.type.rawValue), ("PushHub-Delivery", event.id),
                (WebhookSignature.header, signature),
            ], body: body, maxResponseBodyBytes: maxAnswerBytes)
        http.send(request, to: webhook.url.origin, timeout: attemptTimeout, now: now) { outcome in
            switch outcome {
            case .response(let response):
                if (200..<300).contains(response.status) { return done(response.status, nil) }
                let text = String(decoding: response.body.prefix(errorBodyBytes), as: UTF8.self)
                done(response.status, "the receiver answered \(response.status)" + (text.isEmpty ? "" : ": \(text)"))
            case .failed(let why):
                done(nil, why)
            }
        }
    }
}
