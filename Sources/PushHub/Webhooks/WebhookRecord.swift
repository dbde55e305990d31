import HTTP1

/// The journal's records of webhooks (DESIGN §18), inside `HubRecord.webhook`: definitions,
/// events (each made in the batch of the change that caused it), and attempts' outcomes.
/// `queued` and `counters` are written by snapshots only.
enum WebhookRecord: Sendable {
    case put(Webhook)
    case deleted(String)
    /// An event, queued for every webhook that wants its type when it is applied.
    case event(WebhookEvent)
    case attempt(WebhookAttempt)
    /// Snapshots only: one of a webhook's deliveries, pending or recently finished.
    case queued(webhook: String, WebhookDelivery)
    /// Snapshots only: a webhook's counters.
    case counters(webhook: String, WebhookQueue.Counters)

    var json: JSONValue {
        switch self {
        case .put(let webhook):
            var members = webhook.storedJSON
            members["kind"] = .string("webhook_put")
            return .object(members)
        case .deleted(let name):
            return .object(["kind": .string("webhook_deleted"), "name": .string(name)])
        case .event(let event):
            guard case .object(var members) = event.json else { return event.json }
            members["kind"] = .string("webhook_event")
            return .object(members)
        case .attempt(let attempt):
            var members = attempt.json
            members["kind"] = .string("webhook_attempt")
            return .object(members)
        case .queued(let webhook, let delivery):
            return .object([
                "kind": .string("webhook_queued"), "webhook": .string(webhook), "delivery": delivery.storedJSON,
            ])
        case .counters(let webhook, let counters):
            return .object([
                "kind": .string("webhook_counters"), "webhook": .string(webhook),
                "delivered": .number(Double(counters.delivered)), "failed": .number(Double(counters.failed)),
                "dropped": .number(Double(counters.dropped)), "retried": .number(Double(counters.retried)),
            ])
        }
    }

    /// The kinds this enum stores (`HubRecord` hands these to `init(kind:json:)`).
    static let kinds: Set<String> = [
        "webhook_put", "webhook_deleted", "webhook_event", "webhook_attempt", "webhook_queued", "webhook_counters",
    ]

    init(kind: String, json: JSONValue) throws(HubRecord.DecodingError) {
        func int(_ name: String) throws(HubRecord.DecodingError) -> Int {
            guard let value = json[name]?.intValue else {
                throw HubRecord.DecodingError(description: "\(kind) has no integer \(name)")
            }
            return value
        }
        func string(_ name: String) throws(HubRecord.DecodingError) -> String {
            guard let value = json[name]?.stringValue else {
                throw HubRecord.DecodingError(description: "\(kind) has no string \(name)")
            }
            return value
        }
        switch kind {
        case "webhook_put":
            let url: HTTPURL
            do {
                url = try HTTPURL(parsing: try string("url"))
            } catch {
                throw HubRecord.DecodingError(description: "webhook_put has a bad url: \(error)")
            }
            let names = json["events"]?.arrayValue?.compactMap(\.stringValue) ?? []
            let events: [WebhookEventType]
            do {
                events = try Webhook.parseEvents(names)
            } catch {
                throw HubRecord.DecodingError(description: "webhook_put: \(error.message)")
            }
            self = .put(
                Webhook(
                    name: try string("name"), url: url, events: events, secret: try string("secret"),
                    createdAt: try int("created_at"), updatedAt: try int("updated_at")))
        case "webhook_deleted":
            self = .deleted(try string("name"))
        case "webhook_event":
            self = .event(try WebhookEvent(json: json))
        case "webhook_attempt":
            self = .attempt(try WebhookAttempt(json: json))
        case "webhook_queued":
            guard let delivery = json["delivery"] else {
                throw HubRecord.DecodingError(description: "webhook_queued has no delivery")
            }
            self = .queued(webhook: try string("webhook"), try WebhookDelivery(stored: delivery))
        case "webhook_counters":
            self = .counters(
                webhook: try string("webhook"),
                WebhookQueue.Counters(
                    delivered: try int("delivered"), failed: try int("failed"), dropped: try int("dropped"),
                    retried: try int("retried")))
        default:
            throw HubRecord.DecodingError(description: "unknown webhook record kind \(kind)")
        }
    }
}
