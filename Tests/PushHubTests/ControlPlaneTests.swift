import Testing
import WSProtocol

@testable import PushHub

/// The control plane through its log seam (`StateLog`): a log the test scripts — it answers
/// each append when told, and hands over entries "another writer" made — and loops that are
/// bare mailboxes the test reads and answers for.
@Suite struct ControlPlaneTests {
    /// A log whose appends wait for the test's answer.
    final class ScriptedLog: StateLog {
        weak var follower: (any LogFollower)?
        private(set) var appended: [LogBatch] = []
        private var pending: ((LogAppendOutcome) -> Void)?
        /// Set while the test plays a read of entries made elsewhere.
        var isReading = false
        /// Set when the control plane appended while an append or a read was outstanding.
        private(set) var appendedWhileBusy = false
        /// Called with the state each `didCommit` is given.
        var onCommit: (HubState) -> Void = { _ in }

        var isBusy: Bool { pending != nil || isReading }

        func append(_ batch: LogBatch, now: UInt64, done: @escaping (LogAppendOutcome) -> Void) {
            if isBusy { appendedWhileBusy = true }
            appended.append(batch)
            pending = done
        }

        /// Answers the outstanding append.
        func answer(_ outcome: LogAppendOutcome) {
            let done = pending!
            pending = nil
            done(outcome)
        }

        /// Plays a read of the log: `records` another writer appended are followed, then the read
        /// settles (refusing what waits with `error`, when given).
        func read(_ records: [HubRecord], refusing error: AdminError? = nil) {
            isReading = true
            if !records.isEmpty { follower?.follow(records.map { FollowedRecord(record: $0, asker: nil) }, now: 0) }
            isReading = false
            follower?.settled(refusing: error)
        }

        func didCommit(_ state: HubState, now: UInt64) { onCommit(state) }
        func tick(now: UInt64) {}
        var nextDeadline: UInt64 { .max }
        var sources: [LoopSource] { [] }
        func close(now: UInt64) {}
        var degradation: String? { nil }
        var status: JSONValue? { nil }
    }

    /// Other hubs the test plays: questions are recorded, live hubs and answers given by hand.
    final class ScriptedPeers: HubPeers {
        var isReachable = true
        private(set) var asked: [(HubQuestion, GatherID)] = []
        private var liveQuestions: [(Set<String>) -> Void] = []
        private(set) var answered: [(RemoteAsker, [LoopAnswer])] = []
        var onQuestion: ((RemoteAsker, HubQuestion) -> Void)?
        var onAnswers: ((String, GatherID, [LoopAnswer]) -> Void)?

        func ask(_ question: HubQuestion, gather: GatherID, now: UInt64) { asked.append((question, gather)) }
        func expectLive(now: UInt64, then: @escaping (Set<String>) -> Void) { liveQuestions.append(then) }
        func answer(_ asker: RemoteAsker, _ answers: [LoopAnswer], now: UInt64) { answered.append((asker, answers)) }
        var latestStart: Int? { nil }
        var leadsSharedWork = true
        func tick(now: UInt64) {}
        var nextDeadline: UInt64 { .max }
        func leave(now: UInt64) {}

        /// Answers every pending live-hubs question with `hubs`.
        func live(_ hubs: Set<String>) {
            let questions = liveQuestions
            liveQuestions.removeAll()
            for then in questions { then(hubs) }
        }
    }

    /// A control plane over a scripted log, with `loopCount` loops whose mailboxes the test reads.
    struct Fixture {
        let log = ScriptedLog()
        let peers: ScriptedPeers?
        let plane: ControlPlane
        let loops: [Mailbox]
        /// Every change each loop received so far, in order (`drain` moves them here).
        final class Received { var changes: [[HubChange]]; init(_ n: Int) { changes = Array(repeating: [], count: n) } }
        let received: Received

        init(loops loopCount: Int = 1, peers: ScriptedPeers? = nil, state: HubState = HubState(keepVersions: 4)) {
            self.peers = peers
            plane = ControlPlane(
                config: HubConfig(), metrics: Metrics(), adminToken: "t",
                clientAddress: SocketAddress(host: "127.0.0.1", port: 1), log: log, peers: peers, state: state,
                epoch: "e", results: LocalResultsLog(dataDirectory: nil, metrics: Metrics(), saltOf: { $0 }))
            loops = (0..<loopCount).map { _ in Mailbox(wake: {}) }
            plane.attach(loops: loops)
            received = Received(loopCount)
        }

        /// The commands each loop was sent since the last call (changes also land in `received`).
        func drain() -> [[LoopCommand]] {
            loops.enumerated().map { index, mailbox in
                let commands = mailbox.drain()
                for case .change(let change, _) in commands { received.changes[index].append(change) }
                return commands
            }
        }

        /// The screens (name@version) of the changes loop 0 received, in order.
        var published: [String] {
            _ = drain()
            return received.changes[0].compactMap {
                guard case .screenPublished(let version, _) = $0 else { return nil }
                return "\(version.name)@\(version.version)"
            }
        }

        func tick(at now: UInt64 = 0) { plane.tickEnded(now: now) }

        /// A read of `name`'s version once everything before it is durable, as the admin API
        /// makes one: `seen` is nil until it answers, then what the committed state holds.
        final class Read { var seen: Int?? }

        func read(_ name: String) -> Read {
            let read = Read()
            plane.afterCommit { [plane] in read.seen = .some(plane.committed.view.screens[name]?.last?.version) }
            return read
        }
    }

    /// A publish of `name` at the next version, as the admin API makes it.
    final class Outcome { var result: Result<[LoopAnswer], AdminError>?; var retries = 0 }

    @discardableResult
    static func publish(_ name: String, on plane: ControlPlane, gathering: Bool = false, retry: Bool = true) -> Outcome {
        let outcome = Outcome()
        func make() {
            let version = ScreenVersion(
                name: name, version: plane.state.nextVersion(of: name), tree: .object(["n": .string(name)]),
                publishedAt: 0)
            plane.mutate([.screenPublished(version)], gathering: gathering, retry: retry ? { outcome.retries += 1; make() } : nil)
            { outcome.result = $0 }
        }
        make()
        return outcome
    }

    static func record(_ name: String, version: Int) -> HubRecord {
        .screenPublished(ScreenVersion(name: name, version: version, tree: .object(["n": .string(name)]), publishedAt: 0))
    }

    // MARK: - Group commit

    @Test("a tick's mutations go to the log as one batch, and none is answered before it is durable")
    func groupCommit() {
        let f = Fixture()
        let a = Self.publish("a", on: f.plane), b = Self.publish("b", on: f.plane), c = Self.publish("c", on: f.plane)
        f.tick()
        #expect(f.log.appended.count == 1)
        #expect(f.log.appended.first?.records.count == 3)
        #expect(a.result == nil && b.result == nil && c.result == nil)
        #expect(f.published.isEmpty, "no change reaches a loop before it is durable")
        f.log.answer(.durable)
        #expect(a.result?.isSuccess == true && b.result?.isSuccess == true && c.result?.isSuccess == true)
        #expect(f.published == ["a@1", "b@1", "c@1"])
    }

    @Test("one append at a time: what is made while one is outstanding goes in the next batch")
    func oneAppendAtATime() {
        let f = Fixture()
        Self.publish("a", on: f.plane)
        f.tick()
        let b = Self.publish("b", on: f.plane)
        f.tick()
        #expect(f.log.appended.count == 1 && !f.log.appendedWhileBusy, "a second append while the first is outstanding")
        f.log.answer(.durable)
        #expect(b.result == nil)
        f.tick()
        #expect(f.log.appended.count == 2)
        f.log.answer(.durable)
        #expect(b.result?.isSuccess == true)
        #expect(f.published == ["a@1", "b@1"])
    }

    @Test("the log may write a snapshot only once the batch reached the loops, with the committed state")
    func snapshotAfterDelivery() {
        let f = Fixture()
        var commits: [(delivered: [String], versions: Int?)] = []
        f.log.onCommit = { state in commits.append((f.published, state.view.screens["a"]?.count)) }
        Self.publish("a", on: f.plane)
        f.tick()
        f.log.answer(.durable)
        #expect(commits.count == 1)
        #expect(commits.first?.delivered == ["a@1"])
        #expect(commits.first?.versions == 1)
    }

    // MARK: - Failures

    @Test("a failed append answers every request of the batch with the log's error and applies nothing")
    func failedAppend() {
        let f = Fixture()
        let a = Self.publish("a", on: f.plane), b = Self.publish("b", on: f.plane)
        f.tick()
        f.log.answer(.failed(AdminError(503, "storage_failed", "disk full")))
        #expect(a.result?.error?.status == 503 && a.result?.error?.code == "storage_failed")
        #expect(b.result?.error?.code == "storage_failed")
        #expect(f.plane.state.view.screens["a"] == nil && f.plane.state.view.screens["b"] == nil)
        #expect(f.published.isEmpty)
        #expect(a.retries == 0, "a failed change is refused, not made again")
    }

    @Test("what was made on top of a batch that failed is made again against the state without it")
    func failedAppendRerunsLaterMutations() {
        let f = Fixture()
        Self.publish("a", on: f.plane)
        f.tick()
        let second = Self.publish("a", on: f.plane)  // version 2, on top of the outstanding version 1
        f.log.answer(.failed(AdminError(503, "storage_failed", "disk full")))
        #expect(second.retries == 1)
        f.tick()
        f.log.answer(.durable)
        #expect(second.result?.isSuccess == true)
        #expect(f.published == ["a@1"], "made again, it is version 1: version 1 never existed")
    }

    // MARK: - Lost races

    @Test("a batch that lost the race waits for what came first, then runs again on top of it")
    func lostRaceRetries() {
        let f = Fixture()
        let mine = Self.publish("a", on: f.plane)
        f.tick()
        f.log.answer(.lostRace)
        #expect(f.plane.state.view.screens["a"] == nil, "taken back")
        #expect(mine.retries == 0, "not before the log brought in what came first")
        f.log.read([Self.record("a", version: 1)])
        #expect(mine.retries == 1)
        f.tick()
        f.log.answer(.durable)
        #expect(mine.result?.isSuccess == true)
        #expect(f.published == ["a@1", "a@2"], "the other writer's version first, this one numbered after it")
    }

    @Test("a change that cannot be made again is answered 409 after a lost race")
    func lostRaceWithoutRetry() {
        let f = Fixture()
        let mine = Self.publish("a", on: f.plane, retry: false)
        f.tick()
        f.log.answer(.lostRace)
        f.log.read([])
        #expect(mine.result?.error?.status == 409)
    }

    @Test("a lost race whose catch-up fails refuses the waiting change with the log's error")
    func lostRaceCatchUpFails() {
        let f = Fixture()
        let mine = Self.publish("a", on: f.plane)
        f.tick()
        f.log.answer(.lostRace)
        f.log.read([], refusing: AdminError(503, "redis_unavailable", "gone"))
        #expect(mine.result?.error?.code == "redis_unavailable")
        #expect(mine.retries == 0)
    }

    @Test("entries made elsewhere take back what is not yet durable here, and it is made again after them")
    func followTakesBackSpeculativeChanges() {
        let f = Fixture()
        f.log.isReading = true  // the log is reading: the tick's change waits
        let mine = Self.publish("a", on: f.plane)
        f.tick()
        #expect(f.log.appended.isEmpty && !f.log.appendedWhileBusy, "appended while the log was reading")
        f.log.follower?.follow([FollowedRecord(record: Self.record("a", version: 1), asker: nil)], now: 0)
        #expect(f.plane.state.view.screens["a"]?.last?.version == 1)
        #expect(mine.retries == 0)
        f.log.isReading = false
        f.log.follower?.settled(refusing: nil)
        #expect(mine.retries == 1)
        f.tick()
        f.log.answer(.durable)
        #expect(f.published == ["a@1", "a@2"])
    }

    @Test("a sticky assignment that lost the race is dropped when the other writer assigned the unit first")
    func stickyAssignmentFirstWriterWins() throws {
        let experiment = try Experiment(
            key: "e",
            json: .object([
                "sticky": .bool(true), "status": .string("running"),
                "variants": .array([.object(["key": .string("a")]), .object(["key": .string("b")])]),
            ]))
        var state = HubState(keepVersions: 4)
        state.apply(.experimentPut(experiment))
        let f = Fixture(state: state)
        f.plane.received(.stickyAssigned(experiment: "e", unit: "u1", variant: "a"))
        f.tick()
        f.log.answer(.lostRace)
        f.log.read([.stickyAssigned(experiment: "e", unit: "u1", variant: "b")])
        f.tick()
        #expect(f.log.appended.count == 1, "the assignment made again although the unit has one")
        #expect(f.plane.state.view.sticky["e"]?["u1"] == "b")
    }

    // MARK: - Reads

    @Test("a read waits for the changes before it and sees them once durable")
    func readAfterWrite() {
        let f = Fixture()
        Self.publish("a", on: f.plane)
        let read = f.read("a")
        #expect(read.seen == nil, "a read answered before the change before it was durable")
        f.tick()
        f.log.answer(.durable)
        #expect(read.seen == .some(1))
    }

    @Test("a read after a change that failed does not see it")
    func readAfterFailedWrite() {
        let f = Fixture()
        Self.publish("a", on: f.plane)
        let read = f.read("a")
        f.tick()
        f.log.answer(.failed(AdminError(503, "storage_failed", "disk full")))
        #expect(read.seen == .some(nil))
    }

    @Test("a read answered when its batch is durable does not see a change made after the batch went out")
    func readSeesOnlyCommittedState() {
        let f = Fixture()
        Self.publish("a", on: f.plane)
        var answer: Response?
        let head = RequestHead(
            method: "GET", target: "/v1/screens/b", version: "HTTP/1.1",
            headers: HeaderFields([("Host", "admin"), ("Authorization", "Bearer t")]))
        f.plane.handle(head, body: [], reply: AdminReply { answer = $0 })
        f.tick()  // the batch: a's publish and the read
        Self.publish("b", on: f.plane)  // made while the batch is appended: not durable yet
        f.log.answer(.durable)
        #expect(answer?.status == 404, "the read showed b, which is not durable and may still fail")
    }

    @Test("a read that waited through a lost race waits again for the changes made again before it")
    func readWaitsForChangesMadeAgain() {
        let f = Fixture()
        Self.publish("a", on: f.plane)
        let read = f.read("a")
        f.tick()
        f.log.answer(.lostRace)
        f.log.read([])
        #expect(read.seen == nil, "the read answered before the change it came after was made again")
        f.tick()
        f.log.answer(.durable)
        #expect(read.seen == .some(1))
    }

    @Test("a change made while the tick ends (made again after a failed batch) does not wait for the next wake-up")
    func changeMadeAtTickEndWakesTheLoop() {
        let f = Fixture()
        Self.publish("a", on: f.plane)
        f.tick()
        #expect(f.plane.nextDeadline != 0, "nothing is waiting: the loop may sleep")
        let second = Self.publish("a", on: f.plane)
        #expect(f.plane.nextDeadline != 0, "the log is busy: the change waits for its answer")
        f.log.answer(.failed(AdminError(503, "storage_failed", "disk full")))
        #expect(second.retries == 1)
        #expect(f.plane.nextDeadline == 0, "the change made again would wait for whatever wakes the loop next")
    }

    // MARK: - Snapshot reload

    @Test("a reload brings the loops to the snapshot's state before the entries after it")
    func reloadOrdering() {
        var state = HubState(keepVersions: 4)
        state.apply(Self.record("a", version: 1))
        state.apply(Self.record("gone", version: 1))
        let f = Fixture(state: state)
        f.log.isReading = true
        let mine = Self.publish("c", on: f.plane)
        f.log.follower?.reload([Self.record("a", version: 2), Self.record("b", version: 1)], now: 0)
        f.log.follower?.follow([FollowedRecord(record: Self.record("a", version: 3), asker: nil)], now: 0)
        f.log.isReading = false
        #expect(mine.retries == 0)
        f.log.follower?.settled(refusing: nil)
        #expect(mine.retries == 1)
        _ = f.drain()
        let changes = f.received.changes[0].map { change -> String in
            switch change {
            case .screenPublished(let version, _): "\(version.name)@\(version.version)"
            case .screenDeleted(let name): "-\(name)"
            default: "other"
            }
        }
        #expect(Set(changes.prefix(3)) == ["a@2", "b@1", "-gone"], "the snapshot's changes first")
        #expect(changes.dropFirst(3).first == "a@3", "then the entry after it")
        #expect(f.plane.state.view.screens["gone"] == nil)
    }

    // MARK: - Gathers

    @Test("a gathering change answers with every loop's answer, and only after they all answered")
    func gatheringChangeWaitsForLoops() {
        let f = Fixture(loops: 2)
        let mine = Self.publish("a", on: f.plane, gathering: true)
        f.tick()
        f.log.answer(.durable)
        #expect(mine.result == nil)
        let replies = f.drain().map { commands in
            commands.compactMap { command -> GatherID? in
                if case .change(_, let reply?) = command { return reply }
                return nil
            }
        }
        f.plane.received(.answer(replies[0][0], .published(sent: 3, renditions: [])))
        #expect(mine.result == nil)
        f.plane.received(.answer(replies[1][0], .published(sent: 4, renditions: [])))
        let sent = (try? mine.result?.get())?.reduce(0) { total, answer in
            if case .published(let count, _) = answer { return total + count }
            return total
        }
        #expect(sent == 7)
    }

    @Test("a gather a loop does not answer finishes incomplete at its deadline, with what arrived")
    func gatherTimesOut() {
        let f = Fixture(loops: 2)
        var finished: (answers: [LoopAnswer], complete: Bool)?
        f.plane.gather(.subscribers, now: 0) { finished = ($0, $1) }
        let id = f.drain().first?.compactMap { command -> GatherID? in
            if case .query(_, let reply) = command { return reply }
            return nil
        }.first
        f.plane.received(.answer(id!, .subscribers(["a": 1])))
        f.tick(at: Scatter.timeout - 1)
        #expect(finished == nil)
        f.tick(at: Scatter.timeout)
        #expect(finished?.complete == false)
        #expect(finished?.answers.count == 1)
    }

    @Test("scaled out, a gathering change's deadline starts once it is durable, and it waits for the live hubs")
    func gatheringChangeAcrossHubs() {
        let peers = ScriptedPeers()
        let f = Fixture(loops: 1, peers: peers)
        let mine = Self.publish("a", on: f.plane, gathering: true)
        f.tick(at: 0)
        let id = f.log.appended[0].gathers.first?.id
        #expect(id != nil, "the entry names the gather the other hubs answer")
        peers.live(["hub-b"])
        f.tick(at: 10 * Scatter.timeout)  // the log is slow: the gather must not expire meanwhile
        #expect(mine.result == nil)
        peers.onAnswers?("hub-b", id!, [.published(sent: 5, renditions: [])])  // b applied it before we heard
        f.log.answer(.durable)
        #expect(mine.result == nil, "loop 0 has not answered")
        f.plane.received(.answer(id!, .published(sent: 1, renditions: [])))
        #expect((try? mine.result?.get())?.count == 2)
    }

    @Test("another hub's question is asked of this hub's loops and their answers go back to it")
    func answersOtherHubs() {
        let peers = ScriptedPeers()
        let f = Fixture(loops: 2, peers: peers)
        peers.onQuestion?(RemoteAsker(hub: "hub-b", gather: 42), .loops(.subscribers))
        let ids = f.drain().map { commands in
            commands.compactMap { command -> GatherID? in
                if case .query(_, let reply) = command { return reply }
                return nil
            }
        }
        f.plane.received(.answer(ids[0][0], .subscribers(["a": 1])))
        #expect(peers.answered.isEmpty)
        f.plane.received(.answer(ids[1][0], .subscribers(["a": 2])))
        #expect(peers.answered.count == 1)
        #expect(peers.answered.first?.0.gather == 42 && peers.answered.first?.1.count == 2)
    }

    // MARK: - A release's guard (DESIGN §15)

    /// A state with `home` at version 1 and release r-2 rolling at 100 %, halted by one error.
    static func releasing() -> HubState {
        var state = HubState(keepVersions: 4)
        state.apply(record("home", version: 1))
        state.apply(
            .releasePut(
                Release(
                    screen: "home", baseVersion: 1,
                    candidate: ScreenVersion(name: "home", version: 2, tree: .object(["n": .string("new")]), publishedAt: 0),
                    qaCohort: nil, healthGuard: ReleaseGuard(maxErrorRate: 0, minUnits: 1),
                    steps: [Release.Step(at: 0, actor: "ci", action: .start(basisPoints: 10_000))])))
        return state
    }

    /// A unit served the candidate and failing to draw it, as a loop reports them.
    static func failingUnit(_ unit: String, on plane: ControlPlane) {
        for outcome in [ResultEvent.ReleaseOutcome.served, .errored(component: nil, message: "boom")] {
            let event = ResultEvent(.release(.init(screen: "home", release: "r-2", outcome: outcome)), unit: unit, at: 0)
            plane.received(.result(event, sessionWasServed: true))
        }
    }

    /// The halt steps the log was asked to append.
    static func halts(in log: ScriptedLog) -> Int {
        log.appended.flatMap(\.records).filter {
            if case .releaseStepped(_, _, let step) = $0, case .halt = step.action { return true }
            return false
        }.count
    }

    @Test("a guard's halt that could not be made durable is asked for again a second later, with no new report")
    func guardHaltRetried() {
        let f = Fixture(state: Self.releasing())
        Self.failingUnit("u1", on: f.plane)
        f.tick(at: 0)  // the reports go to the results log and trip the guard
        f.tick(at: 0)  // the halt goes to the log
        #expect(Self.halts(in: f.log) == 1)
        f.log.answer(.failed(AdminError(503, "storage_failed", "disk full")))
        #expect(f.plane.state.rollingRelease("home") != nil)
        // The time to judge again is set on the monotonic clock when the failure is heard.
        f.tick(at: MonotonicClock.now())
        #expect(Self.halts(in: f.log) == 1, "not before its time")
        let later = MonotonicClock.now() + ControlPlane.judgeAgainAfter
        f.tick(at: later)  // judged again: the halt is made again
        f.tick(at: later)
        #expect(Self.halts(in: f.log) == 2)
        guard Self.halts(in: f.log) == 2 else { return }
        f.log.answer(.durable)
        #expect(f.plane.committed.release("home", "r-2")?.status == .halted)
        _ = f.drain()
        #expect(
            f.received.changes[0].contains {
                if case .releaseChanged(let release, let revert) = $0 { return release.status == .halted && revert?.version == 3 }
                return false
            })
    }

    @Test("a guard's halt that lost the race to another hub's halt of the same release records nothing more")
    func guardHaltLosesToAnotherHub() {
        let f = Fixture(state: Self.releasing())
        Self.failingUnit("u1", on: f.plane)
        f.tick()
        f.tick()
        #expect(Self.halts(in: f.log) == 1)
        f.log.answer(.lostRace)
        let theirs = Release.Step(
            at: 1, actor: "guard", action: .halt(Release.Halt(reason: "theirs", numbers: nil, revertVersion: 3)))
        f.log.read([.releaseStepped(screen: "home", release: "r-2", theirs)])
        f.tick()
        #expect(Self.halts(in: f.log) == 1, "made again after the catch-up, it finds the release halted")
        #expect(f.plane.state.release("home", "r-2")?.halt?.reason == "theirs")
        // A later report finds it halted too.
        Self.failingUnit("u2", on: f.plane)
        f.tick()
        f.tick()
        #expect(Self.halts(in: f.log) == 1)
    }
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }

    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
