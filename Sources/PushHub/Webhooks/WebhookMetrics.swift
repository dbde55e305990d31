/// What `/metrics` shows of webhooks (DESIGN §18) beyond the queues' counters, which the hub
/// state holds: how long deliveries took from the event, and attempts. On the control plane's
/// thread only.
final class WebhookMetrics {
    /// Upper bounds (seconds) of `pushhub_webhook_delivery_seconds`'s buckets.
    static let bounds: [Double] = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400]

    private(set) var buckets = [Int](repeating: 0, count: WebhookMetrics.bounds.count)
    private(set) var count = 0
    private(set) var sum = 0.0
    private(set) var attempts = 0

    func noteDelivered(secondsSinceEvent seconds: Double) {
        count += 1
        sum += seconds
        for (index, bound) in Self.bounds.enumerated() where seconds <= bound { buckets[index] += 1 }
    }

    func noteAttempt(took nanoseconds: UInt64) { attempts += 1 }

    /// The Prometheus text: the queues' counters from `book`, this hub's delivery times, and
    /// the render errors its digest had no room for (`renderErrorsDropped`).
    func exposition(_ book: WebhookBook, renderErrorsDropped: Int) -> String {
        var text = "# HELP pushhub_webhook_events_total Webhook deliveries by webhook and outcome (the cluster's).\n"
        text += "# TYPE pushhub_webhook_events_total counter\n"
        let names = book.queues.keys.sorted()
        for name in names {
            let counters = book.queues[name]!.counters
            for (outcome, value) in [
                ("delivered", counters.delivered), ("retried", counters.retried), ("failed", counters.failed),
                ("dropped", counters.dropped),
            ] {
                text += "pushhub_webhook_events_total{webhook=\"\(name)\",outcome=\"\(outcome)\"} \(value)\n"
            }
        }
        text += "# HELP pushhub_webhook_queue Events waiting per webhook.\n# TYPE pushhub_webhook_queue gauge\n"
        for name in names { text += "pushhub_webhook_queue{webhook=\"\(name)\"} \(book.queues[name]!.pending.count)\n" }
        text += "# HELP pushhub_webhook_delivery_seconds From an event to its delivery, by this hub.\n"
        text += "# TYPE pushhub_webhook_delivery_seconds histogram\n"
        for (index, bound) in Self.bounds.enumerated() {
            text += "pushhub_webhook_delivery_seconds_bucket{le=\"\(bound)\"} \(buckets[index])\n"
        }
        text += "pushhub_webhook_delivery_seconds_bucket{le=\"+Inf\"} \(count)\n"
        text += "pushhub_webhook_delivery_seconds_sum \(sum)\npushhub_webhook_delivery_seconds_count \(count)\n"
        text += "# HELP pushhub_webhook_attempts_total Delivery attempts made by this hub.\n"
        text += "# TYPE pushhub_webhook_attempts_total counter\npushhub_webhook_attempts_total \(attempts)\n"
        text += "# HELP pushhub_webhook_render_errors_dropped_total "
        text += "Render errors left out of events (10,000 screens and versions a minute).\n"
        text += "# TYPE pushhub_webhook_render_errors_dropped_total counter\n"
        text += "pushhub_webhook_render_errors_dropped_total \(renderErrorsDropped)\n"
        return text
    }
}
