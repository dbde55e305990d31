/// Webhooks on the control plane (DESIGN §18): events are made with the changes that cause them
/// (`mutate`, `WebhookEventSource`), render errors are aggregated here, and the dispatcher
/// delivers the committed queues — on one hub of a cluster.
extension ControlPlane {
    func attachWebhooks() {
        webhooks.record = { [unowned self] attempt, done in
            self.keep([.webhook(.attempt(attempt))], what: "a webhook delivery's outcome", done: done)
        }
    }

    /// Whether this hub delivers the cluster's webhooks: alone, always; scaled out, while it
    /// holds the registry's deliverer lease (`HubPeers.leadsSharedWork`).
    var deliversWebhooks: Bool { scatter.peers?.leadsSharedWork ?? true }

    /// A client's `render_error`: an event at once for the first of its screen and version in a
    /// minute, the rest counted into one at the minute's end (`RenderErrorDigest`).
    func renderErrorReported(_ report: RenderErrorReport) {
        guard state.webhooks.wants(.clientRenderError) else { return }
        let now = MonotonicClock.now()
        if let data = renderErrors.note(report, now: now, wallNow: WallClock.nowMilliseconds()) {
            makeRenderErrorEvent(screen: report.screen, data: data)
        }
    }

    private func makeRenderErrorEvent(screen: String, data: JSONObject) {
        let event = WebhookEvent(
            type: .clientRenderError, subject: WebhookEvent.subject(screen: screen), time: WallClock.nowMilliseconds(),
            data: data)
        keep([.webhook(.event(event))], what: "a client.render_error event") { _ in }
    }

    func tickWebhooks(now: UInt64) {
        if let due = renderErrors.nextDeadline, due <= now {
            for (screen, data) in renderErrors.due(now: now, wallNow: WallClock.nowMilliseconds()) {
                makeRenderErrorEvent(screen: screen, data: data)
            }
        }
        webhooks.tick(
            book: committed.webhooks, isDeliverer: deliversWebhooks, now: now, wallNow: WallClock.nowMilliseconds())
    }

    var webhooksNextDeadline: UInt64? {
        let delivery = webhooks.nextDeadline(book: committed.webhooks)
        guard let digest = renderErrors.nextDeadline else { return delivery }
        return min(digest, delivery ?? .max)
    }

    /// Makes `records` durable, made again on a newer state when its batch lost the race;
    /// `done(true)` once durable, `done(false)` (after a log line naming `what`) if the log failed.
    func keep(_ records: [HubRecord], what: String, done: @escaping (Bool) -> Void) {
        mutate(records, retry: { [unowned self] in self.keep(records, what: what, done: done) }) { result in
            if case .failure(let error) = result {
                Log.error("\(what) could not be made durable", [("error", error.message)])
                return done(false)
            }
            done(true)
        }
    }
}
