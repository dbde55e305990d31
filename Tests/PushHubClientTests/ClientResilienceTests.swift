import Foundation
import PushHub
import Synchronization
import Testing

@testable import PushHubClient

/// Issue 24 against a real in-process hub: a dead link given up after two missed heartbeats, a
/// restart's 1001 rejoined within seconds, storage kept per user and per hub state, and a
/// subscription made before the first publish.
@Suite(.serialized) struct ClientResilienceTests {
    static func options(random: Double = 0.5) -> PushHubClient.Options {
        var options = PushHubClient.Options()
        options.random = { random }
        return options
    }

    static func screen(_ text: String) -> JSONValue { ClientAgainstHubTests.screen(#"{"title":"\#(text)"}"#) }

    /// The link through a black-hole proxy dies (no FIN, no RST) 1.5 s into a quiet session with
    /// heartbeats every second: the client gives it up once nothing arrived for 4 s (3 to 4 s
    /// after the link died, the last heartbeat being at most 1 s old), reconnects through the
    /// proxy, resumes with `unchanged` and gets the sync sent into the dead link.
    func deadLinkIsGivenUp(transport: any ClientTransport) throws {
        let fixture = try HubFixture(pingInterval: .seconds(1))
        defer { fixture.stop() }
        let proxy = try BlackHoleProxy(target: fixture.port)
        defer { proxy.close() }
        _ = try fixture.publish("home", Self.screen("v1"))
        let url = HubURL("ws://127.0.0.1:\(proxy.port)/v1/connect")!
        let client = PushHubClient(url: url, credentials: .device("d-dead"), transport: transport, options: Self.options())
        defer { client.close() }
        let recorder = Recorder()
        recorder.attach(client, screen: "home")
        #expect(recorder.wait { recorder.lastTree?.meta.version == 1 && client.welcome?.heartbeatSeconds == 1 })
        Thread.sleep(forTimeInterval: 1.5)  // a quiet session: only heartbeats flow
        #expect(client.state == .live && client.stats.connects == 1)
        #expect(try proxy.blackHole() == 1)
        let diedAt = ContinuousClock.now
        let sync = try fixture.admin("POST", "/v1/syncs", #"{"target":{"all":true},"reason":"hotfix"}"#).json
        let id = try #require(sync["id"]?.stringValue)
        #expect(sync["targeted_online"] == .number(1))  // the hub still counts the dead link
        let givenUp = recorder.wait {
            recorder.events.withLock { $0.contains { if case .closed(1006, _, _?, _, nil) = $0 { true } else { false } } }
        }
        let detected = ContinuousClock.now - diedAt
        #expect(givenUp && detected >= .milliseconds(2500) && detected <= .seconds(5), "\(detected)")
        let reason = recorder.events.withLock { events in
            events.compactMap { if case .closed(1006, let reason, _, _, _) = $0 { reason } else { nil } }.first
        }
        #expect(reason?.contains("the link is dead") == true, "\(reason ?? "")")
        #expect(client.stats.deadLinks == 1)
        #expect(recorder.wait { client.stats.welcomes == 2 && client.stats.unchanged == 1 }, "\(client.stats)")
        #expect(recorder.wait { recorder.syncs.withLock { $0.contains { $0.sync.id == id } } })
        #expect(client.stats.snapshots == 1 && client.stats.connects == 2, "\(client.stats)")
        #expect(recorder.trees.withLock { $0.map(\.meta.source) } == [.snapshot])  // unchanged: nothing new to draw
        #expect(try proxy.carried() == 1)
    }

    @Test("a dead link (no FIN, no RST) is given up after two missed heartbeats and the session resumes: SocketTransport")
    func deadLinkOverSockets() throws {
        try deadLinkIsGivenUp(transport: SocketTransport())
    }

    @Test(
        "a dead link is given up after two missed heartbeats and the session resumes: URLSessionTransport",
        .enabled(if: URLSessionTransportTests.webSocketsAvailable, "this URLSession has no WebSockets (Debian's libcurl 7.88)"))
    func deadLinkOverURLSession() throws {
        try deadLinkIsGivenUp(transport: URLSessionTransport())
    }

    @Test("a restart's 1001 starts the backoff over with a 4 s ceiling: live again within 4 s of the hub's return")
    func goingAwayRejoinsQuickly() throws {
        let fixture = try HubFixture()
        defer { fixture.stop() }
        _ = try fixture.publish("home", Self.screen("v1"))
        // random 0.95: delays 0.475, 0.95, 1.9, 3.8, 3.8… s (before: 7.6, 15.2… s once past 4 s).
        let client = PushHubClient(url: fixture.url, credentials: .device("d-1001"), options: Self.options(random: 0.95))
        defer { client.close() }
        let recorder = Recorder()
        recorder.attach(client, screen: "home")
        #expect(recorder.wait { recorder.lastTree?.meta.version == 1 })
        try fixture.restart(downtime: .seconds(8))
        let backAt = ContinuousClock.now
        #expect(recorder.wait(.seconds(10)) { client.stats.welcomes == 2 })
        let backIn = ContinuousClock.now - backAt
        let retries = recorder.events.withLock { events in
            events.compactMap { event -> (UInt16, Duration)? in
                if case .closed(let code, _, let retryIn?, _, _) = event { (code, retryIn) } else { nil }
            }
        }
        #expect(backIn <= .seconds(5), "\(backIn): \(retries)")
        #expect(retries.first?.0 == 1001 && retries.allSatisfy { $0.1 <= .seconds(4) }, "\(retries)")
        #expect(recorder.wait { client.stats.unchanged == 1 } && client.stats.snapshots == 1)
    }

    @Test("two users sharing one storage never get each other's stored tree, also when a token provider switches users")
    func usersShareStorage() throws {
        let fixture = try HubFixture(anonymous: false)
        defer { fixture.stop() }
        _ = try fixture.publish("home", Self.screen("base"))
        let experiment = #"""
            {"key":"look","status":"running","variants":[{"key":"A"},{"key":"B"}],"overrides":{"alice":"A","bob":"B"},
             "screens":{"home":{"A":{"title":"alice's"},"B":{"title":"bob's"}}}}
            """#
        #expect(try fixture.admin("PUT", "/v1/experiments/look", experiment).status == 200)
        let storage = MemoryStorage()
        func session(_ credentials: Credentials) -> (PushHubClient, Recorder) {
            let client = PushHubClient(url: fixture.url, credentials: credentials, storage: storage, options: Self.options())
            let recorder = Recorder()
            recorder.attach(client, screen: "home")
            return (client, recorder)
        }
        func titles(_ recorder: Recorder) -> [String] {
            recorder.trees.withLock { $0.map { "\($0.meta.source.rawValue) \($0.tree["title"]?.stringValue ?? "")" } }
        }
        let (alice, aliceSeen) = session(.token(fixture.token(user: "alice")))
        #expect(aliceSeen.wait { titles(aliceSeen) == ["snapshot alice's"] })
        alice.closeAndWait()
        let (bob, bobSeen) = session(.token(fixture.token(user: "bob")))
        #expect(bobSeen.wait { bob.stats.snapshots == 1 })
        #expect(titles(bobSeen) == ["snapshot bob's"], "bob was shown another user's tree first")
        bob.closeAndWait()
        let (again, againSeen) = session(.token(fixture.token(user: "alice")))
        #expect(againSeen.wait { titles(againSeen) == ["cache alice's", "unchanged alice's"] })
        again.closeAndWait()

        // One client whose token provider signs bob in after alice: alice's tree is forgotten.
        let user = Mutex("alice")
        let tokens = Credentials.tokenProvider { fixture.token(user: user.withLock { $0 }) }
        let (switching, seen) = session(tokens)
        defer { switching.close() }
        #expect(seen.wait { titles(seen) == ["cache alice's", "unchanged alice's"] })
        user.withLock { $0 = "bob" }
        try fixture.restart(downtime: .milliseconds(50))
        #expect(seen.wait { switching.stats.welcomes == 2 && titles(seen).count == 4 })
        #expect(titles(seen).suffix(2) == ["cache bob's", "unchanged bob's"], "\(titles(seen))")
        #expect(switching.welcome?.user == "bob")
    }

    @Test("storage from a wiped hub state: the missed syncs replayed and handed over, a snapshot, never a patch from the old state")
    func anotherHubState() throws {
        let fixture = try HubFixture()
        defer { fixture.stop() }
        let kept = Self.screen("the same tree in both states")
        _ = try fixture.publish("home", Self.screen("old one"))
        _ = try fixture.publish("home", kept)
        let client = PushHubClient(url: fixture.url, credentials: .device("d-epoch"), options: Self.options())
        defer { client.close() }
        let recorder = Recorder()
        recorder.attach(client, screen: "home")
        #expect(recorder.wait { recorder.lastTree?.meta.version == 2 })
        let oldEpoch = client.welcome?.epoch
        let old = try (0..<3).map { _ in try fixture.admin("POST", "/v1/syncs", #"{"target":{"all":true},"reason":"old"}"#).json }
        #expect(recorder.wait { client.lastSync == 3 && recorder.syncs.withLock { $0.count } == 3 })
        // A wiped state on the same address: versions and sync seqs (and ids) start again, and its
        // version 2 is the very tree the client holds (a `have` would get a patch from it).
        try fixture.restart(downtime: .milliseconds(300), freshState: true)
        _ = try fixture.publish("home", Self.screen("new one"))
        _ = try fixture.publish("home", kept)
        let now = try fixture.publish("home", Self.screen("new two"))
        let missed = try (0..<2).map { _ in try fixture.admin("POST", "/v1/syncs", #"{"target":{"all":true},"reason":"new"}"#).json }
        #expect(missed.map { $0["id"] } == old.prefix(2).map { $0["id"] })
        #expect(recorder.wait { recorder.lastTree?.meta.version == now.version })
        #expect(recorder.lastTree?.meta.source == .snapshot && client.stats.patches == 0, "\(client.stats)")
        #expect(recorder.lastTree?.meta.hash == now.hash)
        #expect(recorder.wait { recorder.syncs.withLock { $0.count } == 5 })
        #expect(recorder.syncs.withLock { $0.suffix(2).map(\.sync.reason) } == ["new", "new"])
        #expect(recorder.wait { client.lastSync == 2 })
        #expect(client.stats.epochChanges == 1 && client.welcome?.epoch != oldEpoch && client.welcome?.epoch != nil)
    }

    @Test("a subscription before the first publish is pending, stays, and gets the tree when it is published")
    func pendingUntilPublished() throws {
        let fixture = try HubFixture()
        defer { fixture.stop() }
        let client = PushHubClient(url: fixture.url, credentials: .device("d-pending"), options: Self.options())
        defer { client.close() }
        let recorder = Recorder()
        recorder.attach(client, screen: nil)
        let pendings = Mutex(0)
        let trees = Mutex<[TreeMeta]>([])
        let promo = client.subscribe("promo") { _, meta in trees.withLock { $0.append(meta) } } onPending: {
            pendings.withLock { $0 += 1 }
        }
        #expect(recorder.wait { pendings.withLock { $0 } == 1 && promo.isPending })
        #expect(recorder.events.withLock { $0.contains { if case .error = $0 { true } else { false } } } == false)
        let published = try fixture.publish("promo", Self.screen("summer sale"))
        #expect(recorder.wait { trees.withLock { $0.count } == 1 })
        #expect(trees.withLock { $0 } == [TreeMeta(version: published.version, hash: published.hash, source: .snapshot)])
        #expect(!promo.isPending && client.stats.pending == 1 && client.state == .live)
        let next = try fixture.publish("promo", Self.screen("summer sale, last day"))
        #expect(recorder.wait { trees.withLock { $0.last?.version } == next.version })
    }
}

/// Tests/EndToEnd/blackhole.py run as a program: a TCP proxy to the hub whose links can be
/// turned into black holes (no FIN, no RST) while new ones still work — one implementation for
/// the JavaScript and the Swift client's tests.
final class BlackHoleProxy: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var lines: [String] = []
    private var buffered: [UInt8] = []
    let port: UInt16

    init(target: UInt16) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("EndToEnd/blackhole.py")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, String(target)]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var first: [UInt8] = []
        guard let port = UInt16(try Self.line(from: output, buffered: &first)) else {
            throw HubFixture.Failure("blackhole.py did not print its port")
        }
        self.port = port
        buffered = first
    }

    /// Turns every link carried now into a black hole; how many there were.
    func blackHole() throws -> Int { try command("black_hole") }

    /// How many links are forwarded.
    func carried() throws -> Int { try command("carried") }

    func close() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    private func command(_ name: String) throws -> Int {
        input.fileHandleForWriting.write(Data((name + "\n").utf8))
        guard let count = Int(try Self.line(from: output, buffered: &buffered)) else {
            throw HubFixture.Failure("blackhole.py did not answer \(name)")
        }
        return count
    }

    private static func line(from pipe: Pipe, buffered: inout [UInt8]) throws -> String {
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                defer { buffered.removeFirst(newline + 1) }
                return String(decoding: buffered[..<newline], as: UTF8.self)
            }
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { throw HubFixture.Failure("blackhole.py ended") }
            buffered += chunk
        }
    }
}
