import HTTP1

/// A webhook's definition (DESIGN §18): where events go, which ones, and the secret they are
/// signed with.
///
/// Invariants: `url` is https, or http to a loopback host; `events` is not empty and holds only
/// subscribable types; `secret` is 16 to 256 bytes of visible ASCII.
struct Webhook: Sendable, Equatable {
    let name: String
    let url: HTTPURL
    /// The types it is sent, in a stable order.
    let events: [WebhookEventType]
    let secret: String
    /// Unix milliseconds.
    let createdAt: Int
    let updatedAt: Int

    func wants(_ type: WebhookEventType) -> Bool { events.contains(type) }

    /// What a GET shows: never the secret.
    var json: JSONObject {
        [
            "name": .string(name), "url": .string(url.description),
            "events": .array(events.map { .string($0.rawValue) }),
            "created_at": .number(Double(createdAt)), "updated_at": .number(Double(updatedAt)),
        ]
    }

    /// The journal's form: with the secret (the hub signs with it after a restart).
    var storedJSON: JSONObject {
        var members = json
        members["secret"] = .string(secret)
        return members
    }

    static let secretLengths = 16...256

    /// Checks a secret an operator gave: nil when it is fine, else what is wrong.
    static func checkSecret(_ secret: String) throws(InputError) {
        guard secretLengths.contains(secret.utf8.count), secret.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw InputError("bad_secret", "\"secret\" must be 16 to 256 characters of visible ASCII (no spaces)")
        }
    }

    /// Checks a URL an operator gave: https, or http to a loopback host (tests, a local relay).
    static func parseURL(_ text: String) throws(InputError) -> HTTPURL {
        let url: HTTPURL
        do {
            url = try HTTPURL(parsing: text)
        } catch {
            throw InputError("bad_url", "\"url\": \(error.description)")
        }
        guard url.origin.isTLS || url.isLoopback else {
            throw InputError("bad_url", "\"url\" must be https:// (http:// only to a loopback host such as 127.0.0.1)")
        }
        return url
    }

    /// The types `names` stand for: each a subscribable type, or "*" for all of them.
    static func parseEvents(_ names: [String]) throws(InputError) -> [WebhookEventType] {
        guard !names.isEmpty else {
            throw InputError("bad_events", "\"events\" must name at least one event type (or \"*\")")
        }
        var wanted = Set<WebhookEventType>()
        for name in names {
            if name == "*" {
                wanted.formUnion(WebhookEventType.subscribable)
            } else if let type = WebhookEventType(rawValue: name), type != .webhookTest {
                wanted.insert(type)
            } else {
                let known = WebhookEventType.subscribable.map(\.rawValue).joined(separator: ", ")
                throw InputError(
                    "bad_events", "\"events\" names \"\(name)\", which is not an event type; known: \(known), or \"*\"")
            }
        }
        return WebhookEventType.subscribable.filter { wanted.contains($0) }
    }
}
