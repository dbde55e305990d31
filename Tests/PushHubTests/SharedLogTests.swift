import TestSupport
import Testing

@testable import PushHub

/// The shared log (`SharedLog`) keeps the log seam's contract (`StateLog`) against a real
/// redis-server: two hubs' logs on one Redis, driven by a `PollDriver`, each with a follower that
/// records what it is told.
@Suite(.serialized) struct SharedLogTests {
    /// Records the log's calls in order.
    final class Follower: LogFollower {
        var events: [String] = []
        var followed: [FollowedRecord] = []
        var refusals: [AdminError] = []

        func follow(_ records: [FollowedRecord], now: UInt64) {
            followed += records
            events.append("follow \(records.count)")
        }

        func reload(_ records: [HubRecord], now: UInt64) -> Int {
            events.append("reload \(records.count)")
            return records.count
        }

        func settled(refusing error: AdminError?) {
            if let error { refusals.append(error) }
            events.append(error.map { "refused \($0.code)" } ?? "settled")
        }
    }

    /// A hub's log on `server`, with its follower.
    struct Hub {
        let log: SharedLog
        let follower = Follower()

        init(_ id: String, on server: RedisServer) throws {
            let endpoint = RedisEndpoint(url: try RedisURL("redis://127.0.0.1:\(server.port)"), locate: nil, tls: nil)
            log = SharedLog(
                journal: ClusterJournal(endpoint: endpoint, hubID: id, applied: 0, now: MonotonicClock.now()),
                sentinel: nil, redis: endpoint.url, metrics: Metrics())
            log.follower = follower
        }
    }

    /// Drives the hubs' links — and their logs' ticks (reading what others appended) when
    /// `following` — until `condition` holds.
    static func run(_ hubs: [Hub], following: Bool = true, until condition: () -> Bool) -> Bool {
        let driver = PollDriver(hubs.flatMap(\.log.sources))
        return driver.run(for: .seconds(10)) {
            if following { for hub in hubs { hub.log.tick(now: MonotonicClock.now()) } }
            return condition()
        }
    }

    /// Appends `records` on `hub` and waits for the outcome.
    static func append(
        _ records: [HubRecord], gathers: [(record: Int, id: GatherID)] = [], on hub: Hub, with hubs: [Hub],
        following: Bool = true
    ) -> LogAppendOutcome? {
        var outcome: LogAppendOutcome?
        #expect(run(hubs, following: following) { !hub.log.isBusy && hub.log.journal.isReady })
        hub.log.append(LogBatch(records: records, gathers: gathers), now: MonotonicClock.now()) { outcome = $0 }
        _ = run(hubs, following: following) { outcome != nil }
        return outcome
    }

    static func publish(_ name: String, version: Int) -> HubRecord {
        .screenPublished(ScreenVersion(name: name, version: version, tree: .object([:]), publishedAt: 0))
    }

    @Test("an entry one hub appends is followed by the other, with who waits for its answer, then the read settles")
    func followsAnotherHub() throws {
        let server = try RedisServer()
        let a = try Hub("hub-a", on: server), b = try Hub("hub-b", on: server)
        let outcome = Self.append([Self.publish("home", version: 1)], gathers: [(0, 7)], on: a, with: [a, b])
        guard case .durable = outcome else {
            Issue.record("append: \(String(describing: outcome))")
            return
        }
        #expect(Self.run([a, b]) { b.follower.events.contains("follow 1") && b.follower.events.last == "settled" })
        #expect(b.follower.followed.first?.asker?.hub == "hub-a" && b.follower.followed.first?.asker?.gather == 7)
        #expect(b.log.journal.applied == 1)
        #expect(!a.follower.events.contains { $0.hasPrefix("follow") }, "a hub does not follow its own append")
    }

    @Test("an append made against an old state loses the race; the log then hands over what came first and settles")
    func lostRace() throws {
        let server = try RedisServer()
        let a = try Hub("hub-a", on: server), b = try Hub("hub-b", on: server)
        guard case .durable = Self.append([Self.publish("home", version: 1)], on: a, with: [a]) else {
            Issue.record("a's append")
            return
        }
        // b has not read a's entry: its append is made against the state before it.
        let outcome = Self.append([Self.publish("home", version: 1)], on: b, with: [b], following: false)
        guard case .lostRace = outcome else {
            Issue.record("b's append: \(String(describing: outcome))")
            return
        }
        // Without ticks (no poll, no notice read): the log reads on its own after a lost race.
        #expect(Self.run([b], following: false) { b.follower.events.last == "settled" })
        let firstFollow = b.follower.events.firstIndex(of: "follow 1")
        #expect(firstFollow != nil && firstFollow! < b.follower.events.count - 1, "followed, then settled")
        guard case .durable = Self.append([Self.publish("home", version: 2)], on: b, with: [b]) else {
            Issue.record("b's append made again")
            return
        }
        #expect(b.log.journal.applied == 2)
    }

    @Test("an entry this hub cannot apply stops the log: waiting changes and later appends are refused")
    func undecodableEntryStopsFollowing() throws {
        let server = try RedisServer()
        let a = try Hub("hub-a", on: server), b = try Hub("hub-b", on: server)
        let outcome = Self.append(
            [Self.publish("home", version: 1), .screenDeleted("home")], on: a, with: [a])
        guard case .durable = outcome else {
            Issue.record("append")
            return
        }
        // Overwrite nothing: append a second entry a newer PushHub might write.
        var raw: Result<RESPValue, RedisError>?
        a.log.journal.commands.send(
            RedisCommand("XADD", [ClusterJournal.streamKey, "0-2", "hub", "hub-z", "records", #"[{"kind":"from_the_future"}]"#]),
            now: MonotonicClock.now()) { raw = $0 }
        #expect(Self.run([a]) { raw != nil })
        #expect(Self.run([b]) { b.follower.refusals.contains { $0.code == "shared_state_unavailable" } })
        #expect(b.log.isDegraded && b.log.fault?.contains("journal entry 2") == true)
        #expect(b.log.degradation?.hasPrefix("cannot follow the shared journal: ") == true)
        guard case .failed(let error) = Self.append([Self.publish("x", version: 1)], on: b, with: [b]) else {
            Issue.record("an append after the fault")
            return
        }
        #expect(error.code == "shared_state_unavailable")
    }

    @Test("after a fault, a later fault still settles, refusing what waits for the log: nothing hangs")
    func faultAlwaysSettles() throws {
        let server = try RedisServer()
        let a = try Hub("hub-a", on: server)
        #expect(Self.run([a]) { a.follower.events.last == "settled" })
        a.follower.refusals.removeAll()
        a.log.stopFollowing("hub-b holds other secrets")
        a.log.stopFollowing("journal entry 7 cannot be applied")
        #expect(a.follower.refusals.count == 2, "a second fault left what waited for the log unanswered")
        #expect(a.follower.refusals.allSatisfy { $0.code == "shared_state_unavailable" && $0.message.contains("hub-b") })
    }

    @Test("a shared log and its links are freed when dropped (no reference cycle through a link's callbacks)")
    func freedWhenDropped() throws {
        let server = try RedisServer()
        weak var journal: ClusterJournal?
        weak var commands: RedisConnection?
        do {
            let a = try Hub("hub-a", on: server)
            journal = a.log.journal
            commands = a.log.journal.commands
        }
        #expect(journal == nil && commands == nil)
    }

    @Test("with Redis away an append is refused at once, saying so, and the log reports degraded")
    func redisAway() throws {
        var server: RedisServer? = try RedisServer()
        let a = try Hub("hub-a", on: server!)
        #expect(Self.run([a]) { a.log.journal.isReady })
        server = nil  // stops it
        #expect(Self.run([a]) { !a.log.journal.isReady })
        var outcome: LogAppendOutcome?
        a.log.append(LogBatch(records: [Self.publish("home", version: 1)], gathers: []), now: MonotonicClock.now()) {
            outcome = $0
        }
        guard case .failed(let error) = outcome else {
            Issue.record("\(String(describing: outcome))")
            return
        }
        #expect(error.status == 503 && error.code == "redis_unavailable")
        #expect(a.log.degradation?.hasPrefix("cannot reach Redis: ") == true, "\(a.log.degradation ?? "nil")")
    }

    @Test("a new log says it is connecting, and connectNow returns once both links listen")
    func connectsBeforeServing() throws {
        let server = try RedisServer()
        let a = try Hub("hub-a", on: server)
        #expect(a.log.degradation == "connecting to Redis")
        #expect(!a.log.journal.isListening)
        #expect(a.log.connectNow(timeout: .seconds(10)))
        #expect(a.log.journal.isListening && a.log.degradation == nil)
        a.log.close(now: MonotonicClock.now())
    }
}
