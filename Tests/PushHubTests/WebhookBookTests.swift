import HTTP1
import Testing

@testable import PushHub

@Suite struct WebhookBookTests {
    static func webhook(_ name: String, _ events: [WebhookEventType] = [.screenPublished, .syncCreated]) throws
        -> Webhook
    {
        Webhook(
            name: name, url: try HTTPURL(parsing: "http://127.0.0.1:9/\(name)"), events: events,
            secret: "0123456789abcdef", createdAt: 1, updatedAt: 1)
    }

    static func event(_ id: String, _ type: WebhookEventType = .screenPublished, subject: String = "screen:home")
        -> WebhookEvent
    {
        WebhookEvent(id: id, type: type, subject: subject, time: 100, data: ["n": .string(id)])
    }

    @Test func anEventIsQueuedForEveryWebhookThatWantsItsTypeOnly() throws {
        var book = WebhookBook()
        book.apply(.put(try Self.webhook("a", [.screenPublished])))
        book.apply(.put(try Self.webhook("b", [.syncCreated])))
        book.apply(.event(Self.event("ev-1")))
        #expect(book.queues["a"]?.pending.map(\.event.id) == ["ev-1"])
        #expect(book.queues["b"]?.pending.isEmpty == true)
        #expect(book.wants(.syncCreated) && !book.wants(.releaseHalted))
    }

    @Test func beyondTheLimitTheOldestPendingIsDroppedAndCounted() throws {
        var book = WebhookBook(queueLimit: 3)
        book.apply(.put(try Self.webhook("a")))
        for i in 1...5 { book.apply(.event(Self.event("ev-\(i)"))) }
        let queue = try #require(book.queues["a"])
        #expect(queue.pending.map(\.event.id) == ["ev-3", "ev-4", "ev-5"])
        #expect(queue.counters.dropped == 2)
        #expect(queue.recent.map(\.state) == [.dropped, .dropped])
    }

    @Test func attemptsMoveAnEventOnAndCountIt() throws {
        var book = WebhookBook()
        book.apply(.put(try Self.webhook("a")))
        book.apply(.event(Self.event("ev-1")))
        book.apply(.event(Self.event("ev-2")))
        book.apply(
            .attempt(
                WebhookAttempt(webhook: "a", event: "ev-1", outcome: .retry(at: 500), status: 500, error: "x", at: 200))
        )
        var queue = try #require(book.queues["a"])
        #expect(queue.pending.first?.attempts == 1)
        #expect(queue.pending.first?.nextAttemptAt == 500)
        #expect(queue.counters.retried == 1)
        book.apply(
            .attempt(WebhookAttempt(webhook: "a", event: "ev-1", outcome: .delivered, status: 204, error: nil, at: 600))
        )
        book.apply(
            .attempt(WebhookAttempt(webhook: "a", event: "ev-2", outcome: .failed, status: nil, error: "down", at: 700))
        )
        // An outcome of an event no longer pending (a second hub's, a replay's) changes nothing.
        book.apply(
            .attempt(WebhookAttempt(webhook: "a", event: "ev-1", outcome: .delivered, status: 200, error: nil, at: 800))
        )
        queue = try #require(book.queues["a"])
        #expect(queue.pending.isEmpty)
        #expect(queue.counters == WebhookQueue.Counters(delivered: 1, failed: 1, dropped: 0, retried: 1))
        #expect(queue.recent.map(\.event.id) == ["ev-1", "ev-2"])
        #expect(queue.recent.map(\.state) == [.delivered, .failed])
        #expect(queue.recent[0].attempts == 2 && queue.recent[0].finishedAt == 600)
    }

    @Test func aSnapshotRebuildsTheSameQueuesThroughTheJournalsJSON() throws {
        var book = WebhookBook(queueLimit: 10)
        book.apply(.put(try Self.webhook("a")))
        book.apply(.put(try Self.webhook("b", [.syncCreated])))
        for i in 1...4 { book.apply(.event(Self.event("ev-\(i)", subject: "screen:s\(i % 2)"))) }
        book.apply(.event(Self.event("ev-9", .syncCreated, subject: "sync:s-1")))
        book.apply(
            .attempt(
                WebhookAttempt(webhook: "a", event: "ev-2", outcome: .retry(at: 900), status: nil, error: "t", at: 5)))
        book.apply(
            .attempt(WebhookAttempt(webhook: "a", event: "ev-1", outcome: .delivered, status: 200, error: nil, at: 6)))
        var rebuilt = WebhookBook(queueLimit: 10)
        for record in book.snapshotRecords() {
            let stored = try HubRecord(json: try JSONReader.parse(JSONWriter.write(HubRecord.webhook(record).json)))
            guard case .webhook(let again) = stored else { Issue.record("not a webhook record"); return }
            rebuilt.apply(again)
        }
        for name in ["a", "b"] {
            let before = try #require(book.queues[name]), after = try #require(rebuilt.queues[name])
            #expect(after.webhook == before.webhook)
            #expect(after.pending == before.pending)
            #expect(after.recent == before.recent)
            #expect(after.counters == before.counters)
            #expect(JSONWriter.write(after.json) == JSONWriter.write(before.json))
        }
    }

    @Test func theEventTypesAWebhookNamesAreCheckedAndStarIsEveryOne() throws {
        #expect(try Webhook.parseEvents(["*"]) == WebhookEventType.subscribable)
        #expect(try Webhook.parseEvents(["sync.created", "screen.published"]) == [.screenPublished, .syncCreated])
        #expect(throws: InputError.self) { try Webhook.parseEvents(["screen.publish"]) }
        #expect(throws: InputError.self) { try Webhook.parseEvents(["webhook.test"]) }
        #expect(throws: InputError.self) { try Webhook.parseEvents([]) }
        #expect(throws: InputError.self) { try Webhook.parseURL("http://hooks.example.com/x") }
        #expect(try Webhook.parseURL("http://127.0.0.1:8/x").target == "/x")
        #expect(throws: InputError.self) { try Webhook.checkSecret("short") }
        #expect(throws: InputError.self) { try Webhook.checkSecret("has a space in it ok") }
    }
}
