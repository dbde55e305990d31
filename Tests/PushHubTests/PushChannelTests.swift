import HTTP2
import Testing

@testable import PushHub

/// A provider's channel (DESIGN §17) against a scripted connection: each answer ends the push
/// the way the provider meant it, counted once, and the queue stays within its bounds.
@Suite struct PushChannelTests {
    /// A connection whose answers the test gives, request by request.
    final class ScriptedTransport: PushTransport {
        var sent: [(request: HTTP2Request, done: (HTTP2LinkOutcome) -> Void)] = []
        var answered = 0
        var waiting: Int { sent.count - answered }

        func send(_ request: HTTP2Request, now: UInt64, done: @escaping (HTTP2LinkOutcome) -> Void) {
            sent.append((request, done))
        }

        func close() {
            while answered < sent.count {
                let done = sent[answered].done
                answered += 1
                done(.failed("closed", unprocessed: true))
            }
        }

        /// Answers the oldest unanswered request.
        func answer(_ status: Int, _ body: String = "", headers: [HeaderField] = []) {
            let done = sent[answered].done
            answered += 1
            done(.response(HTTP2Response(status: status, headers: headers, body: Array(body.utf8))))
        }
    }

    /// Signs nothing: the credential is "t<renewals so far>", carried as it is.
    final class PlainCredentials: PushCredentials {
        var provider: PushProvider { .apns }
        var renewals: [String] = []
        func authorization(nowMilliseconds: Int, now: UInt64) -> PushAuthorization { .ready("t\(renewals.count)") }
        var nextAttempt: UInt64? { nil }
        func renew(after credential: String) { renewals.append(credential) }
        func request(for job: PushJob, credential: String, nowMilliseconds: Int) throws(PushRequestError)
            -> HTTP2Request
        {
            HTTP2Request(
                method: "POST", scheme: "https", authority: "apns", path: "/3/device/\(job.token)",
                headers: [HeaderField("authorization", "bearer " + credential)], body: [])
        }
    }

    struct Fixture {
        let transport = ScriptedTransport()
        let credentials = PlainCredentials()
        let metrics = PushMetrics()
        let channel: PushChannel
        let sync: Sync

        init(capacity: Int = 100, maxInFlight: Int = 100, push: PushMode = .offline, ttlMilliseconds: Int = 60_000) {
            channel = PushChannel(
                credentials: credentials, transport: transport, metrics: metrics, capacity: capacity,
                maxInFlight: maxInFlight)
            channel.random = { 0 }
            let now = WallClock.nowMilliseconds()
            sync = Sync(
                seq: 7, target: Target(scope: .all), reason: "hotfix", scope: "bundle", hint: nil, collapse: nil,
                mandatory: false, createdAt: now, expiresAt: now + ttlMilliseconds, spreadMilliseconds: 0,
                jitterMilliseconds: 0, push: push)
        }

        func add(_ tokens: [String]) {
            let now = MonotonicClock.now()
            for token in tokens {
                let device = DeviceRegistryTests.device("u", "d-\(token)", token: token)
                channel.add(PushJob(sync: sync, device: device), at: now, now: now)
            }
            channel.tick(now: now)
        }

        var receipts: ReceiptCounts { sync.receipts.counts }
    }

    @Test("200 counts pushed; 410 forgets the token and counts push_failed; each once")
    func delivered() {
        let fixture = Fixture()
        var dead: [(DeviceKey, String)] = []
        fixture.channel.onTokenInvalid = { dead.append(($0, $1)) }
        fixture.add(["a", "b", "c"])
        #expect(fixture.transport.sent.map(\.request.path) == ["/3/device/a", "/3/device/b", "/3/device/c"])
        fixture.transport.answer(200)
        fixture.transport.answer(410, #"{"reason":"Unregistered"}"#)
        fixture.transport.answer(400, #"{"reason":"BadTopic"}"#)
        #expect(fixture.receipts.pushed == 1)
        #expect(fixture.receipts.pushFailed == 2)
        #expect(dead.map(\.1) == ["b"])
        #expect(dead.first?.0 == DeviceKey(user: "u", device: "d-b"))
        #expect(fixture.metrics.outcomes(.apns, .invalidToken) == 1)
        #expect(fixture.metrics.outcomes(.apns, .failed) == 1)
        #expect(fixture.transport.sent.count == 3, "nothing is sent again")
    }

    @Test("429 is retried after the provider's retry-after; a device that came online meanwhile is not pushed")
    func retried() throws {
        let fixture = Fixture()
        var asked: [[DeviceKey]] = []
        var answerOnline: ((Set<DeviceKey>) -> Void)?
        fixture.channel.checkOnline = { keys, done in
            asked.append(keys)
            answerOnline = done
        }
        fixture.add(["a", "b"])
        fixture.transport.answer(429, #"{"reason":"TooManyRequests"}"#)
        fixture.transport.answer(503)
        #expect(fixture.metrics.outcomes(.apns, .retried) == 2)
        #expect(asked.map { $0.map(\.device) } == [["d-a"]], "one question at a time")
        #expect(fixture.transport.sent.count == 2, "nothing is sent before the answer")
        let first = try #require(answerOnline)
        first([DeviceKey(user: "u", device: "d-a")])
        #expect(asked.map { $0.map(\.device) } == [["d-a"], ["d-b"]])
        let second = try #require(answerOnline)
        second([])
        #expect(fixture.transport.sent.count == 3)
        #expect(fixture.transport.sent[2].request.path == "/3/device/b")
        fixture.transport.answer(200)
        #expect(fixture.receipts.pushed == 1 && fixture.receipts.pushFailed == 0)
        #expect(fixture.metrics.outcomes(.apns, .online) == 1)
    }

    @Test("a retry-after beyond the sync's TTL ends the push as expired")
    func expiresBeforeRetry() {
        let fixture = Fixture(ttlMilliseconds: 5_000)
        fixture.add(["a"])
        fixture.transport.answer(429, headers: [HeaderField("retry-after", "30")])
        #expect(fixture.receipts.pushFailed == 1)
        #expect(fixture.metrics.outcomes(.apns, .expired) == 1)
    }

    @Test("an expired provider token is renewed once and the push sent again with the new one")
    func renewal() {
        let fixture = Fixture(push: .always)
        fixture.add(["a"])
        fixture.transport.answer(403, #"{"reason":"ExpiredProviderToken"}"#)
        fixture.channel.tick(now: MonotonicClock.now())
        #expect(fixture.credentials.renewals == ["t0"])
        #expect(fixture.transport.sent.count == 2)
        #expect(fixture.transport.sent[1].request.headers == [HeaderField("authorization", "bearer t1")])
        fixture.transport.answer(200)
        #expect(fixture.receipts.pushed == 1)
    }

    @Test("refused credentials stop the provider: what waits fails, nothing more is sent")
    func stops() {
        let fixture = Fixture(maxInFlight: 1)
        fixture.add(["a", "b", "c"])
        #expect(fixture.transport.sent.count == 1, "one in flight at most")
        fixture.transport.answer(403, #"{"reason":"InvalidProviderToken"}"#)
        #expect(fixture.channel.stopped != nil)
        #expect(fixture.receipts.pushFailed == 3)
        fixture.add(["d"])
        #expect(fixture.transport.sent.count == 1)
        #expect(fixture.receipts.pushFailed == 4)
        #expect(fixture.metrics.outcomes(.apns, .unavailable) == 4)
    }

    @Test("a stopped provider's requests in flight end as unavailable and are never sent again")
    func stopCancelsInFlight() {
        let fixture = Fixture(maxInFlight: 3)
        fixture.add(["a", "b", "c", "d"])
        #expect(fixture.transport.sent.count == 3)
        fixture.transport.answer(403, #"{"reason":"InvalidProviderToken"}"#)
        #expect(fixture.transport.waiting == 0, "the connection was closed")
        #expect(fixture.receipts.pushFailed == 4 && fixture.receipts.pushed == 0)
        #expect(fixture.metrics.outcomes(.apns, .unavailable) == 4)
        #expect(fixture.metrics.outcomes(.apns, .retried) == 0)
        #expect(fixture.transport.sent.count == 3)
    }

    @Test("a tick takes a bounded share of a big queue; the rest goes at the next ticks")
    func boundedTick() {
        let fixture = Fixture(capacity: 10_000, maxInFlight: 10_000)
        fixture.add((0..<5000).map { "t\($0)" })
        #expect(fixture.transport.sent.count == PushChannel.maxTakenPerTick)
        #expect(fixture.channel.nextDeadline == 0, "the loop must come back at once for the rest")
        fixture.channel.tick(now: MonotonicClock.now())
        fixture.channel.tick(now: MonotonicClock.now())
        #expect(fixture.transport.sent.count == 5000)
        #expect(fixture.channel.nextDeadline == nil)
    }

    @Test("pushes out for an online question keep their places: the queue does not overfill meanwhile")
    func capacityDuringOnlineCheck() throws {
        let fixture = Fixture(capacity: 2)
        var answerOnline: ((Set<DeviceKey>) -> Void)?
        fixture.channel.checkOnline = { _, done in answerOnline = done }
        fixture.add(["a", "b"])
        fixture.transport.answer(503)
        fixture.transport.answer(503)
        #expect(fixture.channel.queued == 2, "both retried, waiting for the answer")
        fixture.add(["c"])
        #expect(fixture.metrics.outcomes(.apns, .dropped) == 1, "no room for a third")
        // One question at a time: a's, then b's.
        let first = try #require(answerOnline)
        first([])
        let second = try #require(answerOnline)
        second([])
        #expect(fixture.transport.sent.count == 4 && fixture.metrics.outcomes(.apns, .dropped) == 1)
    }

    @Test("a full queue drops what does not fit, and counts it")
    func bounded() {
        let fixture = Fixture(capacity: 2, maxInFlight: 0)
        fixture.add(["a", "b", "c", "d"])
        #expect(fixture.channel.queued == 2)
        #expect(fixture.metrics.outcomes(.apns, .dropped) == 2)
        #expect(fixture.receipts.pushFailed == 2)
    }

    @Test("a connection that fails is retried, up to the attempts allowed")
    func linkFailures() {
        let fixture = Fixture(push: .always)
        fixture.add(["a"])
        for _ in 0..<PushChannel.maxAttempts {
            let done = fixture.transport.sent[fixture.transport.answered].done
            fixture.transport.answered += 1
            done(.failed("connection reset", unprocessed: false))
            fixture.channel.tick(now: MonotonicClock.now())
        }
        #expect(fixture.transport.sent.count == PushChannel.maxAttempts)
        #expect(fixture.receipts.pushFailed == 1)
        #expect(fixture.metrics.outcomes(.apns, .failed) == 1)
    }
}
