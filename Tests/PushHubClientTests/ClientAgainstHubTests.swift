import Foundation
import Synchronization
import PushHub
import Testing

@testable import PushHubClient

/// The Swift client against a real in-process hub over loopback sockets (DESIGN §12).
@Suite(.serialized) struct ClientAgainstHubTests {
    static func options(random: Double = 0.5, backoff: Backoff = Backoff(initial: .milliseconds(100), cap: .seconds(1)))
        -> PushHubClient.Options
    {
        var options = PushHubClient.Options()
        options.random = { random }
        options.backoff = backoff
        return options
    }

    /// A client of `device` on `fixture` (the test's options) following `screen` (nil: none),
    /// with a recorder attached; the caller closes the client.
    static func client(
        of device: String, on fixture: HubFixture, following screen: String?, storage: any ClientStorage = MemoryStorage()
    ) -> (PushHubClient, Recorder) {
        let client = PushHubClient(url: fixture.url, credentials: .device(device), storage: storage, options: options())
        let recorder = Recorder()
        recorder.attach(client, screen: screen)
        return (client, recorder)
    }

    static func tree(_ text: String) -> JSONValue { (try? JSONReader.parse(text)) ?? .null }

    /// Enough filler that a leaf edit goes out as a patch, not as a snapshot smaller than it.
    static let filler = JSONValue.array((0..<60).map { .string("filler line \($0) of a screen that is not tiny") })

    static func screen(_ members: String) -> JSONValue {
        var object = tree(members).objectValue ?? JSONObject()
        object["filler"] = filler
        return .object(object)
    }

    @Test("trees equal the published ones and hash as the hub's through leaf edits, keyed reorders, inserts, UTF-16 key order, edge numbers and escapes")
    func treesFollowPublishes() throws {
        let fixture = try HubFixture()
        defer { fixture.stop() }
        let trees = [
            #"{"title":"Hi","items":[{"id":"a","text":"A"},{"id":"b","text":"B"},{"id":"c","text":"C"}]}"#,
            #"{"title":"Hello","items":[{"id":"a","text":"A"},{"id":"b","text":"B"},{"id":"c","text":"C"}]}"#,
            #"{"title":"Hello","items":[{"id":"c","text":"C"},{"id":"a","text":"A"},{"id":"b","text":"B2"}]}"#,
            #"{"title":"Hello","items":[{"id":"c","text":"C"},{"id":"d","text":"D"},{"id":"a","text":"A"},{"id":"b","text":"B2"}]}"#,
            #"{"title":"Hello","keys":{"\u00e9":1,"\ud83d\ude00":2,"\ue000":3,"\uff5a":4,"a":5}}"#,
            #"{"title":"Hello","n":[0.1,1e21,-0,5e-324,123456789012345680000,1e-7,-1.5]}"#,
            #"{"title":"line\u2028sep\u2029 \"q\" \\ \u0007 \u007f \ud800\udc00","n":[0.1]}"#,
        ].map(Self.screen)
        _ = try fixture.publish("home", trees[0])
        let (client, recorder) = Self.client(of: "d-trees", on: fixture, following: "home")
        defer { client.close() }
        for (i, tree) in trees.enumerated() {
            let published = i == 0 ? (version: 1, hash: ScreenHash.of(tree)) : try fixture.publish("home", tree)
            #expect(recorder.wait { recorder.lastTree?.meta.version == published.version }, "version \(published.version)")
            let (held, meta) = try #require(recorder.lastTree)
            let hub = try fixture.admin("GET", "/v1/screens/home").json
            #expect(held == hub["tree"], "tree \(published.version)")
            #expect(meta.hash == published.hash && meta.hash == hub["hash"]?.stringValue)
            #expect(ScreenHash.of(held) == meta.hash)
        }
        #expect(client.stats.patches >= 4, "leaf edits and reorders arrive as patches: \(client.stats)")
        #expect(client.stats.resubscribes == 0)
        #expect(recorder.events.withLock { $0.contains { if case .mismatch = $0 { true } else { false } } } == false)
    }

    @Test("the hub restarted under it: reconnects with backoff, then resumes with unchanged and patches, never a snapshot")
    func restart() throws {
        let fixture = try HubFixture()
        defer { fixture.stop() }
        _ = try fixture.publish("home", Self.screen(#"{"title":"v1"}"#))
        let (client, recorder) = Self.client(of: "d-restart", on: fixture, following: "home")
        defer { client.close() }
        #expect(recorder.wait { recorder.lastTree?.meta.version == 1 })
        try fixture.restart(downtime: .milliseconds(1500))
        #expect(recorder.wait { client.state == .live })
        let v2 = try fixture.publish("home", Self.screen(#"{"title":"v2"}"#))
        #expect(recorder.wait { recorder.lastTree?.meta.version == v2.version })
        let retries = recorder.events.withLock { events in
            events.compactMap { event -> Duration? in
                if case .closed(_, _, let retryIn?, _, _) = event { retryIn } else { nil }
            }
        }
        // random 0.5: delays 50, 100, 200, 400, 500, 500… ms: 1.5 s down takes 4 to 7 attempts.
        #expect((4...8).contains(retries.count), "\(retries)")
        #expect(retries.prefix(4) == [.milliseconds(50), .milliseconds(100), .milliseconds(200), .milliseconds(400)])
        #expect(client.stats.snapshots == 1 && client.stats.unchanged >= 1, "\(client.stats)")
        #expect(recorder.lastTree?.meta.source == .patch)
    }

    @Test("a new client on the same storage starts from the stored tree and resumes with unchanged and last_sync")
    func storageResume() throws {
        let fixture = try HubFixture()
        defer { fixture.stop() }
        let published = try fixture.publish("home", Self.screen(#"{"title":"kept"}"#))
        let storage = try FileStorage(directory: URL(fileURLWithPath: fixture.dataDirectory + "-client"))
        let first = PushHubClient(url: fixture.url, credentials: .anonymous, storage: storage, options: Self.options())
        let recorder = Recorder()
        recorder.attach(first, screen: "home")
        #expect(recorder.wait { recorder.lastTree?.meta.version == published.version })
        let sync = try fixture.admin("POST", "/v1/syncs", #"{"target":{"all":true},"reason":"r","scope":"s"}"#).json
        #expect(recorder.wait { first.lastSync == sync["seq"]?.intValue })
        first.close()
        let device = try storage.value(forKey: "device")
        #expect(device?.hasPrefix("d-") == true)

        let second = PushHubClient(url: fixture.url, credentials: .anonymous, storage: storage, options: Self.options())
        defer { second.close() }
        let again = Recorder()
        again.attach(second, screen: "home")
        #expect(again.wait { second.stats.unchanged == 1 })
        // The stored tree at once, then the hub's confirmation that it is current.
        #expect(again.wait { again.trees.withLock { $0.map(\.meta.source) } == [.cache, .unchanged] })
        #expect(second.stats.snapshots == 0)
        #expect(second.lastSync == sync["seq"]?.intValue)
        let clients = try fixture.admin("GET", "/v1/clients").json
        #expect(clients["clients"]?.arrayValue?.first?["device"]?.stringValue == device)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(again.syncs.withLock { $0.isEmpty }, "last_sync kept the handled sync from coming back")
    }

    @Test("a tree as deep as the hub accepts arrives in a snapshot, a patch and a fetch, and is resumed from storage")
    func deepestTree() async throws {
        // The deepest trees the hub takes: `levels` arrays (or objects) inside the screen object,
        // beside a long string so that a patch replacing `deep` whole is smaller than a snapshot.
        func screen(levels: Int, objects: Bool = false) -> String {
            let (open, close) = objects ? (#"{"a":"#, "}") : ("[", "]")
            return #"{"type":"screen","pad":""# + String(repeating: "p", count: 4000) + #"","deep":"#
                + String(repeating: open, count: levels) + "1" + String(repeating: close, count: levels) + "}"
        }
        var levels = 1
        while (try? JSONReader.parse(screen(levels: levels + 1))) != nil { levels += 1 }
        let fixture = try HubFixture()
        defer { fixture.stop() }
        #expect(try fixture.admin("PUT", "/v1/screens/deep", screen(levels: levels + 1)).status == 400)
        #expect(try fixture.admin("PUT", "/v1/screens/deep", screen(levels: levels)).status == 200)
        let storage = MemoryStorage()
        let (client, recorder) = Self.client(of: "d-deep", on: fixture, following: "deep", storage: storage)
        #expect(recorder.wait { recorder.lastTree?.meta.version == 1 })
        // `deep` replaced whole: the patch's op carries a tree as deep as the screen, 3 levels down.
        let v2 = try fixture.publish("deep", try JSONReader.parse(screen(levels: levels, objects: true)))
        #expect(recorder.wait { recorder.lastTree?.meta.hash == v2.hash })
        #expect(recorder.lastTree?.meta.source == .patch)
        let fetched = try await client.fetchScreen("deep")
        #expect(fetched.status == 304 && fetched.hash == v2.hash)
        client.close()
        #expect(recorder.events.withLock { $0.allSatisfy { if case .error = $0 { false } else { true } } })

        let (again, resumed) = Self.client(of: "d-deep", on: fixture, following: "deep", storage: storage)
        defer { again.close() }
        #expect(resumed.wait { resumed.trees.withLock { $0.map(\.meta.source) } == [.cache, .unchanged] })
    }

    @Test("a screen deleted (gone) and published again: subscribing again follows it anew; the ended subscription's callback stays quiet")
    func subscribeAgainAfterGone() throws {
        let fixture = try HubFixture()
        defer { fixture.stop() }
        _ = try fixture.publish("promo", Self.screen(#"{"title":"one"}"#))
        let (client, recorder) = Self.client(of: "d-gone", on: fixture, following: "promo")
        defer { client.close() }
        #expect(recorder.wait { recorder.lastTree?.meta.version == 1 })
        #expect(try fixture.admin("DELETE", "/v1/screens/promo").status == 200)
        #expect(recorder.wait { recorder.events.withLock { $0.contains(.gone(screen: "promo")) } })
        let republished = try fixture.publish("promo", Self.screen(#"{"title":"two"}"#))

        let again = Recorder()
        again.attach(client, screen: "promo")
        #expect(again.wait { again.lastTree?.meta.hash == republished.hash })
        #expect(again.lastTree?.meta.source == .snapshot)
        #expect(recorder.trees.withLock { $0.count } == 1, "the subscription that ended got a tree of the new one")
    }

    @Test("a sync is handed over after its jitter and acked (the receipts show it)")
    func syncJitterAndAck() throws {
        let fixture = try HubFixture(jitterMilliseconds: 800)
        defer { fixture.stop() }
        let (client, recorder) = Self.client(of: "d-sync", on: fixture, following: nil)
        defer { client.close() }
        #expect(recorder.wait { client.state == .live })
        let posted = ContinuousClock.now
        let sync = try fixture.admin("POST", "/v1/syncs", #"{"target":{"all":true},"reason":"hotfix","scope":"bundle","mandatory":true}"#).json
        let id = try #require(sync["id"]?.stringValue)
        #expect(recorder.wait { !recorder.syncs.withLock { $0.isEmpty } })
        let (received, at) = try #require(recorder.syncs.withLock { $0.first })
        #expect(received.id == id && received.reason == "hotfix" && received.scope == "bundle" && received.mandatory)
        #expect(received.jitterMs == 800 && received.delayMs == 400)
        #expect(at - posted >= .milliseconds(400))
        #expect(recorder.wait { fixture.acked(id) })
    }

    @Test("a sync replayed after a reconnect during its jitter wait is handed over once")
    func replayedSyncDeduped() throws {
        let fixture = try HubFixture(jitterMilliseconds: 4000)
        defer { fixture.stop() }
        let (client, recorder) = Self.client(of: "d-dedupe", on: fixture, following: nil)
        defer { client.close() }
        #expect(recorder.wait { client.state == .live })
        let sync = try fixture.admin("POST", "/v1/syncs", #"{"target":{"all":true}}"#).json
        #expect(recorder.wait { client.stats.syncs == 1 })
        // last_sync stays below the waiting sync, so the next hello asks for it again.
        try fixture.restart(downtime: .milliseconds(100))
        #expect(recorder.wait { client.stats.duplicateSyncs == 1 }, "\(client.stats)")
        #expect(recorder.wait(.seconds(5)) { recorder.syncs.withLock { $0.count } == 1 })
        Thread.sleep(forTimeInterval: 0.2)
        #expect(recorder.syncs.withLock { $0.map { $0.sync.id } } == [sync["id"]?.stringValue])
        #expect(client.lastSync == sync["seq"]?.intValue)
    }

    @Test("a sync handled from a push while offline is not handed over again by the hub's replay, which moves last_sync")
    func pushThenReplay() throws {
        let fixture = try HubFixture()
        defer { fixture.stop() }
        let storage = MemoryStorage()
        let (first, recorder) = Self.client(of: "d-push", on: fixture, following: nil, storage: storage)
        #expect(recorder.wait { first.state == .live })
        first.closeAndWait()
        let posted = try fixture.admin("POST", "/v1/syncs", #"{"target":{"all":true},"scope":"bundle"}"#).json
        let id = try #require(posted["id"]?.stringValue)
        let seq = try #require(posted["seq"]?.intValue)
        // The app is woken by the push: a new client on the same storage, handed the APNs userInfo.
        let (client, woken) = Self.client(of: "d-push", on: fixture, following: nil, storage: storage)
        defer { client.close() }
        let userInfo: [AnyHashable: Any] = [
            "aps": ["content-available": 1],
            "pushhub": ["type": "sync", "id": id, "seq": seq, "reason": "", "scope": "bundle"] as [String: Any],
        ]
        #expect(client.handlePush(userInfo))
        #expect(woken.wait { client.stats.duplicateSyncs == 1 }, "\(client.stats)")
        #expect(woken.wait { client.lastSync == seq })
        #expect(woken.syncs.withLock { $0.map(\.sync.id) } == [id])
        #expect(woken.wait { fixture.acked(id) })
    }

    @Test("a hash mismatch injected into a patch leads to a clean resubscribe and the right tree")
    func injectedMismatch() throws {
        let fixture = try HubFixture()
        defer { fixture.stop() }
        _ = try fixture.publish("home", Self.screen(#"{"title":"v1"}"#))
        let client = PushHubClient(
            url: fixture.url, credentials: .device("d-mismatch"), transport: TamperingTransport(), options: Self.options())
        defer { client.close() }
        let recorder = Recorder()
        recorder.attach(client, screen: "home")
        #expect(recorder.wait { recorder.lastTree?.meta.version == 1 })
        let v2 = try fixture.publish("home", Self.screen(#"{"title":"v2"}"#))
        #expect(recorder.wait { recorder.lastTree?.meta.version == v2.version })
        let events = recorder.events.withLock { $0 }
        #expect(events.contains { if case .mismatch(_, 2, _, _, .patch) = $0 { true } else { false } })
        #expect(events.contains(.resubscribe(screen: "home", reason: .hashMismatch, held: 1, from: 1, version: 2)))
        #expect(recorder.lastTree?.meta.source == .snapshot && recorder.lastTree?.meta.hash == v2.hash)
        #expect(recorder.lastTree?.tree == Self.screen(#"{"title":"v2"}"#))
    }

    @Test("fetchScreen: 200 with the tree and its checked hash, 304 once held, 404 unknown, 401 without credentials")
    func fetch() async throws {
        let fixture = try HubFixture(anonymous: false)
        defer { fixture.stop() }
        let published = try fixture.publish("home/main", Self.screen(#"{"title":"fetched"}"#))
        let storage = MemoryStorage()
        let client = PushHubClient(
            url: fixture.url, credentials: .token(fixture.token(user: "u-1")), app: AppInfo(platform: "ios", version: "5.3.0"),
            storage: storage, options: Self.options())
        defer { client.close() }
        // Live first: the fetched tree is stored in the hub state (epoch) the client is in, which
        // is what lets a later subscription send it as `have`.
        #expect(Recorder().wait { client.state == .live })
        let fetched = try await client.fetchScreen("home/main")
        #expect(fetched.status == 200 && fetched.version == published.version && fetched.hash == published.hash)
        #expect(fetched.tree == Self.screen(#"{"title":"fetched"}"#))
        let again = try await client.fetchScreen("home/main")
        #expect(again.status == 304 && again.tree == fetched.tree)
        await #expect(throws: FetchError.self) { try await client.fetchScreen("missing") }
        do {
            _ = try await client.fetchScreen("missing")
        } catch {
            #expect(error.code == .unknownScreen && error.status == 404)
        }
        let anonymous = PushHubClient(url: fixture.url, credentials: .anonymous, options: Self.options())
        defer { anonymous.close() }
        do {
            _ = try await anonymous.fetchScreen("home/main")
            Issue.record("an anonymous fetch from a hub that requires tokens succeeded")
        } catch {
            #expect(error.code == .unauthorized && error.status == 401)
        }
        // A subscription started after the fetch begins from the fetched tree and resumes with `have`.
        let recorder = Recorder()
        recorder.attach(client, screen: "home/main")
        #expect(recorder.wait { client.stats.unchanged == 1 })
        #expect(client.stats.snapshots == 0)
    }

    @Test(
        "a tree callback that throws for a release's candidate reaches the hub as a render_error: the guard (no errors allowed, 1 unit) halts the release and the client is sent the base again"
    )
    func renderErrorHaltsARelease() throws {
        let fixture = try HubFixture()
        defer { fixture.stop() }
        let baseTree = Self.screen(#"{"title":"base"}"#)
        let base = try fixture.publish("home", baseTree)
        let candidate = base.version + 1  // DESIGN §15: a release's candidate is version N+1
        let (client, recorder) = Self.client(of: "d-release", on: fixture, following: nil)
        defer { client.close() }
        client.subscribe("home") { tree, meta in
            recorder.trees.withLock { $0.append((tree, meta)) }
            if meta.version == candidate { throw CarouselFailed() }
        }
        #expect(recorder.wait { recorder.lastTree?.meta.version == base.version })
        let start = JSONValue.object([
            "tree": Self.screen(#"{"title":"candidate"}"#), "percent": .number(100),
            "guard": .object(["max_error_rate": .number(0), "min_units": .number(1)]),
        ])
        let (status, started) = try fixture.admin("POST", "/v1/screens/home/releases", JSONWriter.string(start))
        try #require(status == 201, "starting the release: \(status) \(started)")
        let id = try #require(started["release"]?.stringValue)
        #expect(started["version"]?.intValue == candidate)
        var release = JSONValue.null
        let halted = recorder.wait {
            release = (try? fixture.admin("GET", "/v1/screens/home/releases/\(id)").json) ?? .null
            return release["health"]?["errored"] == .number(1) && release["status"] == .string("halted")
        }
        #expect(halted, "the hub did not count the render_error: \(release)")
        #expect(recorder.trees.withLock { $0.map(\.meta.version) }.contains(candidate))
        let health = release["health"]
        #expect(health?["rendered"] == .number(0), "a rendered was sent for the failed candidate: \(release)")
        #expect(health?["errors_by_component"]?["Carousel"] == .number(1))
        #expect(health?["recent_errors"]?.arrayValue?.first?["message"] == .string("slide 2 has no image"))
        #expect(release["halt"]?["by"] == .string("guard"))
        // Halted: the exposed client is sent the base tree again, as version N+2.
        #expect(recorder.wait { recorder.lastTree?.meta.version == candidate + 1 })
        #expect(recorder.lastTree?.tree == baseTree)
    }

    @Test("close() ends it for good; a refused token is not retried")
    func closeAndRefusal() throws {
        let fixture = try HubFixture(anonymous: false)
        defer { fixture.stop() }
        let refused = PushHubClient(url: fixture.url, credentials: .token("not-a-jwt"), options: Self.options())
        let recorder = Recorder()
        recorder.attach(refused, screen: nil)
        #expect(recorder.wait { refused.state == .closed })
        let events = recorder.events.withLock { $0 }
        #expect(events.contains { if case .error(let error) = $0 { error.code == "unauthorized" } else { false } })
        #expect(events.contains { if case .closed(1008, _, nil, _, let error?) = $0 { error.code == "unauthorized" } else { false } })
        #expect(refused.stats.connects == 1)

        let client = PushHubClient(url: fixture.url, credentials: .token(fixture.token(user: "u-2")), options: Self.options())
        #expect(recorder.wait { client.state == .live })
        #expect(client.welcome?.user == "u-2")
        client.close()
        #expect(recorder.wait { client.state == .closed })
        try fixture.restart(downtime: .milliseconds(50))
        Thread.sleep(forTimeInterval: 0.3)
        #expect(client.stats.connects == 1)
    }
}

/// Wraps `SocketTransport` and breaks the hash of the first patch it receives.
final class TamperingTransport: ClientTransport {
    let inner = SocketTransport()
    let tampered = Mutex(false)

    func open(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> any TransportConnection {
        inner.open(request) { [self] event in
            if case .text(let text) = event, text.contains(#""type":"patch""#), !tampered.withLock({ $0 }) {
                tampered.withLock { $0 = true }
                let broken = text.replacingOccurrences(
                    of: #""hash":"[0-9a-f]{64}""#, with: #""hash":"\#(String(repeating: "0", count: 64))""#,
                    options: .regularExpression)
                return events(.text(broken))
            }
            events(event)
        }
    }

    func get(_ request: TransportRequest, completion: @escaping @Sendable (Result<HTTPAnswer, TransportError>) -> Void) {
        inner.get(request, completion: completion)
    }
}

/// The Swift client over wss:// and https:// (issue 11: TLS in hubctl and the Swift client).
@Suite(.serialized) struct ClientOverTLSTests {
    @Test("wss:// with the hub's certificate trusted: subscribe, a patch, a sync acked, fetchScreen over https")
    func trusted() async throws {
        let fixture = try HubFixture(tls: true)
        defer { fixture.stop() }
        let certificate = try #require(fixture.certificate)
        let (client, hash) = try fixture.snapshotPatchAndSync(
            transport: SocketTransport(trust: .caFile(certificate)), device: "d-tls", options: ClientAgainstHubTests.options())
        defer { client.close() }
        let fetched = try await client.fetchScreen("home")
        #expect(fetched.status == 304 && fetched.hash == hash)
    }

    @Test("an untrusted certificate is a closed connection that says why, retried with backoff")
    func untrusted() throws {
        let fixture = try HubFixture(tls: true)
        defer { fixture.stop() }
        let client = PushHubClient(
            url: fixture.url, credentials: .device("d-untrusted"), options: ClientAgainstHubTests.options())
        defer { client.close() }
        let recorder = Recorder()
        recorder.attach(client, screen: nil)
        #expect(recorder.wait {
            recorder.events.withLock { events in
                events.contains { if case .closed(1006, let reason, _?, 1, nil) = $0 { reason.contains("not trusted") } else { false } }
            }
        })
        #expect(client.state == .reconnecting)
    }
}
