import HTTP1
import Testing

@testable import PushHub

/// The dispatcher against a scripted receiver: what it sends, in which order, and what it
/// journals of each answer.
@Suite struct WebhookDispatcherTests {
    /// Records each request and answers when the test says so.
    final class ScriptedReceiver: HTTPFetching {
        var requests: [(request: HTTP1Request, origin: HTTPOrigin, done: (HTTP1Outcome) -> Void)] = []

        func send(
            _ request: HTTP1Request, to origin: HTTPOrigin, timeout: UInt64, now: UInt64,
            done: @escaping (HTTP1Outcome) -> Void
        ) { requests.append((request, origin, done)) }

        var sentIDs: [String] { requests.map { $0.request.headers.first { $0.name == "PushHub-Delivery" }!.value } }

        func answer(_ index: Int, status: Int) { requests[index].done(.response(HTTP1Response(status: status))) }
    }

    /// A dispatcher whose journal is a book applied at once.
    final class Harness {
        let receiver = ScriptedReceiver()
        let dispatcher: WebhookDispatcher
        var book = WebhookBook()
        var journaled: [WebhookAttempt] = []
        var logWorks = true

        init(webhook: Webhook) {
            dispatcher = WebhookDispatcher(http: receiver, metrics: WebhookMetrics())
            dispatcher.random = { 0.5 }
            book.apply(.put(webhook))
            dispatcher.record = { [unowned self] attempt, done in
                self.journaled.append(attempt)
                guard self.logWorks else { return done(false) }
                self.book.apply(.attempt(attempt))
                done(true)
            }
        }

        func add(_ event: WebhookEvent) {
            book.apply(.event(event))
        }

        func tick(wallNow: Int = WallClock.nowMilliseconds()) {
            dispatcher.tick(book: book, isDeliverer: true, now: MonotonicClock.now(), wallNow: wallNow)
        }
    }

    static func event(_ id: String, subject: String, time: Int = WallClock.nowMilliseconds()) -> WebhookEvent {
        WebhookEvent(id: id, type: .screenPublished, subject: subject, time: time, data: ["id": .string(id)])
    }

    @Test func eachSubjectsEventsGoOneAfterAnotherAndSubjectsGoSideBySide() throws {
        let harness = Harness(webhook: try WebhookBookTests.webhook("a"))
        harness.add(Self.event("ev-1", subject: "screen:home"))
        harness.add(Self.event("ev-2", subject: "screen:home"))
        harness.add(Self.event("ev-3", subject: "screen:news"))
        harness.tick()
        #expect(harness.receiver.sentIDs == ["ev-1", "ev-3"])
        harness.tick()
        #expect(harness.receiver.sentIDs == ["ev-1", "ev-3"], "nothing is sent twice while in flight")
        harness.receiver.answer(0, status: 204)
        harness.tick()
        #expect(harness.receiver.sentIDs == ["ev-1", "ev-3", "ev-2"])
        #expect(harness.journaled.map(\.outcome) == [.delivered])
    }

    @Test func aFailedAttemptIsRetriedWithTheSameBytesAfterItsBackoffAndHoldsItsSubject() throws {
        let harness = Harness(webhook: try WebhookBookTests.webhook("a"))
        let start = WallClock.nowMilliseconds()
        harness.add(Self.event("ev-1", subject: "screen:home", time: start))
        harness.add(Self.event("ev-2", subject: "screen:home", time: start))
        harness.tick(wallNow: start)
        harness.receiver.answer(0, status: 500)
        let retry = try #require(harness.journaled.first)
        guard case .retry(let at) = retry.outcome else { Issue.record("not a retry: \(retry.outcome)"); return }
        // Attempt 1 failed: between half and all of 1 s (0.5 with the test's random: 750 ms).
        #expect((retry.at + 500)...(retry.at + 1000) ~= at)
        #expect(retry.status == 500 && retry.error == "the receiver answered 500")
        harness.tick(wallNow: at - 1)
        #expect(harness.receiver.requests.count == 1, "ev-2 waits behind ev-1's retry")
        #expect(harness.dispatcher.nextDeadline(book: harness.book) != nil)
        harness.tick(wallNow: at)
        #expect(harness.receiver.sentIDs == ["ev-1", "ev-1"])
        #expect(harness.receiver.requests[0].request.body == harness.receiver.requests[1].request.body)
        harness.receiver.answer(1, status: 200)
        harness.tick(wallNow: at)
        #expect(harness.receiver.sentIDs == ["ev-1", "ev-1", "ev-2"])
    }

    @Test func anEventStillUndeliveredADayAfterItWasMadeFails() throws {
        let harness = Harness(webhook: try WebhookBookTests.webhook("a"))
        let dayAgo = WallClock.nowMilliseconds() - WebhookDispatcher.retryWindowMilliseconds - 1
        harness.add(Self.event("ev-1", subject: "screen:home", time: dayAgo))
        harness.tick()
        harness.receiver.requests[0].done(.failed("connection refused"))
        #expect(harness.journaled.map(\.outcome) == [.failed])
        #expect(harness.book.queues["a"]?.counters.failed == 1)
        #expect(harness.book.queues["a"]?.recent.last?.lastError == "connection refused")
    }

    @Test func aHubThatDoesNotDeliverSendsNothing() throws {
        let harness = Harness(webhook: try WebhookBookTests.webhook("a"))
        harness.add(Self.event("ev-1", subject: "screen:home"))
        harness.dispatcher.tick(
            book: harness.book, isDeliverer: false, now: MonotonicClock.now(), wallNow: WallClock.nowMilliseconds())
        #expect(harness.receiver.requests.isEmpty)
        #expect(
            harness.dispatcher.nextDeadline(book: harness.book) != nil, "it looks again in case the deliverer stops")
    }

    @Test func theRequestIsASignedPostOfTheEventToTheWebhooksURL() throws {
        let webhook = try WebhookBookTests.webhook("a")
        let harness = Harness(webhook: webhook)
        let event = Self.event("ev-1", subject: "screen:home")
        harness.add(event)
        harness.tick()
        let (request, origin, _) = try #require(harness.receiver.requests.first)
        #expect(origin == webhook.url.origin)
        #expect(request.method == "POST" && request.target == "/a")
        #expect(request.body == event.body)
        let signature = try #require(request.headers.first { $0.name == "PushHub-Signature" }?.value)
        let t = try #require(signature.split(separator: ",").first.flatMap { Int($0.dropFirst(2)) })
        #expect(abs(t - WallClock.nowMilliseconds() / 1000) <= 2)
        #expect(signature == WebhookSignature.value(body: event.body, secret: webhook.secret, seconds: t))
        #expect(request.headers.contains { $0 == ("PushHub-Event", "screen.published") })
    }

    @Test func theSignatureIsHMACSHA256OfTheTimeADotAndTheBody() {
        // From Python: hmac.new(b"0123456789abcdef", b'1700000000.{"a":1}', hashlib.sha256).hexdigest()
        let value = WebhookSignature.value(
            body: Array(#"{"a":1}"#.utf8), secret: "0123456789abcdef", seconds: 1_700_000_000)
        #expect(value == "t=1700000000,v1=9eb18f493f8ec135d9eb2dad817c369bb4e9cbfa818657897a7437c1cd8c3a23")
    }
}

extension WebhookDispatcherTests {
    @Test func anOutcomeTheLogFailedToKeepHoldsItsEventInsteadOfSendingItAgainAtOnce() throws {
        let harness = Harness(webhook: try WebhookBookTests.webhook("a"))
        harness.logWorks = false
        harness.add(Self.event("ev-1", subject: "screen:home"))
        for _ in 0..<100 {
            harness.tick()
            if let last = harness.receiver.requests.indices.last { harness.receiver.answer(last, status: 200) }
        }
        #expect(harness.receiver.requests.count == 1, "sent again while the log fails")
        let hold = try #require(harness.dispatcher.nextDeadline(book: harness.book))
        #expect(hold > MonotonicClock.now() + 4_000_000_000)
        harness.logWorks = true
        harness.dispatcher.tick(
            book: harness.book, isDeliverer: true, now: hold, wallNow: WallClock.nowMilliseconds())
        #expect(harness.receiver.requests.count == 2, "sent again once the hold ended")
    }

    @Test func stalledReceiversLeaveConnectionsFreeForTheKeys() throws {
        let first = Harness(webhook: try WebhookBookTests.webhook("a"))
        first.book.apply(.put(try WebhookBookTests.webhook("b")))
        for i in 0..<40 {
            first.add(Self.event("ev-a\(i)", subject: "screen:a\(i)"))
            first.book.apply(.event(Self.event("ev-b\(i)", subject: "screen:b\(i)")))
        }
        first.tick()
        #expect(first.receiver.requests.count == WebhookDispatcher.maxInFlight)
        #expect(WebhookDispatcher.maxInFlight <= HTTP1Client.Options(tls: nil).connections - 4)
        #expect(
            first.receiver.requests.filter { $0.request.target == "/a" }.count
                <= HTTP1Client.Options(tls: nil).maxPerOrigin)
    }
}
