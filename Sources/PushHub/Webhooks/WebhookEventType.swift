/// What a webhook can be told of (DESIGN §18). The raw value is the event's `type` on the wire.
enum WebhookEventType: String, CaseIterable, Sendable {
    case screenPublished = "screen.published"
    case screenDeleted = "screen.deleted"
    case releaseStarted = "release.started"
    case releasePercent = "release.percent"
    case releaseHalted = "release.halted"
    case releasePromoted = "release.promoted"
    case syncCreated = "sync.created"
    case clientRenderError = "client.render_error"
    case experimentChanged = "experiment.changed"
    /// `POST /v1/webhooks/{name}/test`: sent to that webhook alone, never queued.
    case webhookTest = "webhook.test"

    /// The types a webhook may subscribe to (`events` in its definition): all but the test.
    static let subscribable = allCases.filter { $0 != .webhookTest }
}
