import Foundation
import Testing

@testable import PushHubClient
import ScreenTree

/// The client's protocol rules, fed message by message (no hub, no sockets).
@Suite struct ClientSessionTests {
    static func message(_ text: String) -> JSONValue { (try? JSONReader.parse(text)) ?? .null }

    static func sent(_ actions: [ClientSession.Action]) -> [JSONObject] {
        actions.compactMap { if case .send(let message) = $0 { message } else { nil } }
    }

    static let device = StorageScope(token: nil, device: "d-1")

    static func welcomed(_ screens: String...) -> ClientSession {
        var session = ClientSession(app: nil, scope: device)
        for screen in screens { _ = session.subscribe(screen, stored: nil) }
        _ = session.receive(message(#"{"type":"welcome","session":"s-1","user":null,"heartbeat_s":25,"sync_seq":7,"epoch":"e-1"}"#))
        return session
    }

    static func snapshot(_ tree: JSONValue, version: Int) -> JSONValue {
        .object([
            "type": .string("snapshot"), "screen": .string("home"), "version": .number(Double(version)),
            "hash": .string(ScreenHash.of(tree)), "tree": tree,
        ])
    }

    @Test("a welcome subscribes each screen, with have when a tree is held")
    func welcomeSubscribes() {
        var session = ClientSession(
            app: AppInfo(platform: "ios", version: "5.3.0"), scope: Self.device, record: ScopeRecord(epoch: "e-1", lastSync: 4))
        let tree = Self.message(#"{"title":"Hi"}"#)
        _ = session.subscribe("home", stored: StoredScreen(tree: tree, version: 3, hash: ScreenHash.of(tree), epoch: "e-1"))
        _ = session.subscribe("menu", stored: nil)
        let hello = Self.sent(session.opened(token: "t", device: nil))
        #expect(JSONWriter.string(.object(hello[0])) == #"{"app":{"platform":"ios","version":"5.3.0"},"epoch":"e-1","heartbeat":true,"last_sync":4,"protocol":1,"token":"t","type":"hello"}"#)
        let (actions, fatal) = session.receive(Self.message(#"{"type":"welcome","session":"s","user":"u","heartbeat_s":25,"sync_seq":9,"epoch":"e-1"}"#))
        #expect(fatal == nil)
        let subscribes = Self.sent(actions).map { JSONWriter.string(.object($0)) }
        #expect(subscribes == [
            #"{"have":{"hash":"\#(ScreenHash.of(tree))","version":3},"screen":"home","type":"subscribe"}"#,
            #"{"screen":"menu","type":"subscribe"}"#,
        ])
    }

    @Test("a patch from a version the client does not hold resubscribes without have, and later patches wait for the snapshot")
    func unexpectedFrom() {
        var session = Self.welcomed("home")
        let v1 = Self.message(#"{"a":1}"#)
        _ = session.receive(Self.snapshot(v1, version: 1))
        let v3 = Self.message(#"{"a":3}"#)
        let (actions, _) = session.receive(.object([
            "type": .string("patch"), "screen": .string("home"), "from": .number(2), "version": .number(3),
            "hash": .string(ScreenHash.of(v3)), "ops": Self.message(#"[{"op":"replace","path":"/a","value":3}]"#),
        ]))
        #expect(actions.contains(.emit(.resubscribe(screen: "home", reason: .unexpectedFrom, held: 1, from: 2, version: 3))))
        #expect(Self.sent(actions).map { JSONWriter.string(.object($0)) } == [#"{"screen":"home","type":"subscribe"}"#])
        // A patch already in flight is ignored until the snapshot arrives.
        let (ignored, _) = session.receive(.object([
            "type": .string("patch"), "screen": .string("home"), "from": .number(3), "version": .number(4),
            "hash": .string("x"), "ops": .array([]),
        ]))
        #expect(ignored.isEmpty)
        let (accepted, _) = session.receive(Self.snapshot(v3, version: 3))
        #expect(accepted.contains(.deliver(screen: "home", tree: v3, meta: TreeMeta(version: 3, hash: ScreenHash.of(v3), source: .snapshot))))
    }

    @Test("a patch whose result does not hash to the hub's hash is a mismatch and a resubscribe")
    func hashMismatch() {
        var session = Self.welcomed("home")
        _ = session.receive(Self.snapshot(Self.message(#"{"a":1}"#), version: 1))
        let (actions, _) = session.receive(.object([
            "type": .string("patch"), "screen": .string("home"), "from": .number(1), "version": .number(2),
            "hash": .string("0000"), "ops": Self.message(#"[{"op":"replace","path":"/a","value":2}]"#),
        ]))
        #expect(actions.contains { if case .emit(.mismatch(_, 2, "0000", _, .patch)) = $0 { true } else { false } })
        #expect(actions.contains(.emit(.resubscribe(screen: "home", reason: .hashMismatch, held: 1, from: 1, version: 2))))
        #expect(session.screens["home"]?.version == nil)
    }

    @Test("syncs are deduped by id, and last_sync stays below a sync until the app has handled it")
    func syncs() {
        var session = Self.welcomed()
        #expect(session.lastSync == 7)
        let sync = Self.message(#"{"type":"sync","id":"s-9","seq":9,"reason":"hotfix","scope":"bundle","jitter_ms":100}"#)
        let (first, _) = session.receive(sync)
        #expect(first.filter { if case .schedule = $0 { true } else { false } }.count == 1)
        #expect(session.lastSync == 8)  // below s-9, which waits for its jitter
        #expect(session.receive(sync).actions.isEmpty)
        #expect(session.stats.duplicateSyncs == 1)
        _ = session.receive(Self.message(#"{"type":"sync","id":"s-10","seq":10,"reason":"r","scope":"s","jitter_ms":0}"#))
        let handled = session.syncHandled("s-10")
        #expect(session.lastSync == 8)  // s-9 still waits for its jitter
        #expect(Self.sent(handled).map { JSONWriter.string(.object($0)) } == [#"{"sync":"s-10","type":"ack"}"#])
        _ = session.syncHandled("s-9")
        #expect(session.lastSync == 10)
    }

    @Test("a welcome from another hub state drops what storage held: no have, a fresh last_sync, sync ids forgotten")
    func epochChange() {
        let tree = Self.message(#"{"title":"Hi"}"#)
        var session = ClientSession(app: nil, scope: Self.device, record: ScopeRecord(epoch: "e-old", lastSync: 40))
        let cached = session.subscribe("home", stored: StoredScreen(tree: tree, version: 3, hash: ScreenHash.of(tree), epoch: "e-old"))
        #expect(cached.contains { if case .deliver(_, _, let meta) = $0 { meta.source == .cache } else { false } })
        _ = session.receive(Self.message(#"{"type":"sync","id":"s-1","seq":41,"reason":"r","scope":"s","jitter_ms":0}"#))
        let hello = Self.sent(session.opened(token: nil, device: "d-1"))
        #expect(hello[0]["epoch"] == .string("e-old") && hello[0]["last_sync"] == .number(40))
        let (actions, _) = session.receive(Self.message(#"{"type":"welcome","session":"s","user":null,"heartbeat_s":25,"sync_seq":2,"epoch":"e-new"}"#))
        #expect(Self.sent(actions).map { JSONWriter.string(.object($0)) } == [#"{"screen":"home","type":"subscribe"}"#])
        #expect(actions.contains(.store(key: "device:d-1:screen:home", value: nil)))
        #expect(actions.contains(.store(key: "device:d-1:epoch", value: #"{"epoch":"e-new","last_sync":2}"#)))
        #expect(session.held("home") == nil && session.epoch == "e-new" && session.stats.epochChanges == 1)
        // The new state numbers its syncs from 1 again: s-1 is a new sync here, handed over.
        let (replayed, _) = session.receive(Self.message(#"{"type":"sync","id":"s-1","seq":1,"reason":"r","scope":"s","jitter_ms":0}"#))
        #expect(replayed.count == 2 && session.stats.duplicateSyncs == 0)
        // last_sync drops below s-1 while it waits for the app: a restart meanwhile gets it again.
        #expect(replayed.contains(.store(key: "device:d-1:epoch", value: #"{"epoch":"e-new","last_sync":0}"#)))
        #expect(session.lastSync == 0)
        // Handled: acked to this hub (the old state's s-1, still waiting when the epoch changed, is forgotten).
        #expect(session.syncHandled("s-1").contains(.send(["type": .string("ack"), "sync": .string("s-1")])))
    }

    @Test("a stored tree of another epoch, or of none, is neither delivered nor sent as have")
    func storedOfAnotherEpoch() {
        let tree = Self.message(#"{"title":"Hi"}"#)
        var session = ClientSession(app: nil, scope: Self.device, record: ScopeRecord(epoch: "e-1", lastSync: nil))
        let other = session.subscribe("home", stored: StoredScreen(tree: tree, version: 3, hash: ScreenHash.of(tree), epoch: "e-0"))
        #expect(other == [.store(key: "device:d-1:screen:home", value: nil)])
        let fetched = session.subscribe("menu", stored: StoredScreen(tree: tree, version: 3, hash: ScreenHash.of(tree), epoch: nil))
        #expect(fetched == [.store(key: "device:d-1:screen:menu", value: nil)])
        // A first session ever (no epoch stored): the welcome's epoch is adopted and recorded.
        var fresh = ClientSession(app: nil, scope: Self.device)
        _ = fresh.subscribe("home", stored: nil)
        let (actions, _) = fresh.receive(Self.message(#"{"type":"welcome","session":"s","user":null,"heartbeat_s":25,"sync_seq":5,"epoch":"e-9"}"#))
        #expect(actions.contains(.store(key: "device:d-1:epoch", value: #"{"epoch":"e-9","last_sync":5}"#)))
        #expect(fresh.stats.epochChanges == 0)
    }

    @Test("another user's scope: what was held is forgotten, the new user's stored tree delivered")
    func userSwitch() {
        let alice = StorageScope(token: Self.jwt(sub: "alice"), device: nil)
        let bob = StorageScope(token: Self.jwt(sub: "bob"), device: nil)
        #expect(alice.screenKey("home") == "user:alice:screen:home" && bob.recordKey == "user:bob:epoch")
        var session = ClientSession(app: nil, scope: alice, record: ScopeRecord(epoch: "e-1", lastSync: 3))
        let aliceTree = Self.message(#"{"who":"alice"}"#)
        _ = session.subscribe("home", stored: StoredScreen(tree: aliceTree, version: 2, hash: ScreenHash.of(aliceTree), epoch: "e-1"))
        let bobTree = Self.message(#"{"who":"bob"}"#)
        let actions = session.enter(
            bob, record: ScopeRecord(epoch: "e-1", lastSync: 9),
            stored: ["home": StoredScreen(tree: bobTree, version: 2, hash: ScreenHash.of(bobTree), epoch: "e-1")])
        #expect(actions == [.deliver(screen: "home", tree: bobTree, meta: TreeMeta(version: 2, hash: ScreenHash.of(bobTree), source: .cache))])
        #expect(session.held("home")?.tree == bobTree && session.lastSync == 9)
        _ = session.enter(alice, record: ScopeRecord(epoch: "e-1", lastSync: nil), stored: [:])
        #expect(session.held("home") == nil)
    }

    @Test("a token's sub names the scope; user ids are escaped so no two users' keys meet")
    func scopes() {
        #expect(StorageScope.subject(ofToken: Self.jwt(sub: "u/ü:1")) == "u/ü:1")
        #expect(StorageScope(token: Self.jwt(sub: "a:screen"), device: nil).recordKey == "user:a%3Ascreen:epoch")
        #expect(StorageScope(token: "not-a-jwt", device: "d").name == "user:")
        #expect(StorageScope(token: nil, device: "d-1").name == "device:d-1")
        #expect(StorageScope.subject(ofToken: "a.\(Array("{\"sub\":1}".utf8).base64URL).c") == nil)
    }

    static func jwt(sub: String) -> String {
        "eyJhbGciOiJIUzI1NiJ9." + Array(JSONWriter.string(.object(["sub": .string(sub)])).utf8).base64URL + ".sig"
    }

    @Test("pending keeps the subscription and drops what was held; the first publish's snapshot is delivered")
    func pending() {
        var session = Self.welcomed("promo")
        let (actions, _) = session.receive(Self.message(#"{"type":"pending","screen":"promo"}"#))
        #expect(actions == [.pending(screen: "promo")])
        #expect(session.screens["promo"]?.pending == true && session.stats.pending == 1)
        let tree = Self.message(#"{"sale":true}"#)
        let (delivered, _) = session.receive(.object([
            "type": .string("snapshot"), "screen": .string("promo"), "version": .number(1),
            "hash": .string(ScreenHash.of(tree)), "tree": tree,
        ]))
        #expect(delivered.contains(.deliver(screen: "promo", tree: tree, meta: TreeMeta(version: 1, hash: ScreenHash.of(tree), source: .snapshot))))
        #expect(session.screens["promo"]?.pending == false)
        // A cached tree of a screen deleted meanwhile: pending drops it.
        var resumed = ClientSession(app: nil, scope: Self.device, record: ScopeRecord(epoch: "e-1", lastSync: nil))
        _ = resumed.subscribe("home", stored: StoredScreen(tree: tree, version: 1, hash: ScreenHash.of(tree), epoch: "e-1"))
        _ = resumed.receive(Self.message(#"{"type":"welcome","session":"s","user":null,"heartbeat_s":25,"sync_seq":0,"epoch":"e-1"}"#))
        let (dropped, _) = resumed.receive(Self.message(#"{"type":"pending","screen":"home"}"#))
        #expect(dropped == [.store(key: "device:d-1:screen:home", value: nil), .pending(screen: "home")])
        #expect(resumed.held("home") == nil)
    }

    @Test("the link is dead after 2 × heartbeat_s + 2 s without any message, counted from the last one")
    func liveness() {
        var session = ClientSession(app: nil, scope: Self.device)
        let start = ContinuousClock.now
        #expect(session.checkLink(now: start) == .closed)
        session.connecting(now: start)
        #expect(session.checkLink(now: start + .seconds(51)) == .alive(until: start + .seconds(52)))  // 25 s until a welcome
        _ = session.opened(token: nil, device: "d-1")
        session.heard(now: start + .seconds(1))
        _ = session.receive(Self.message(#"{"type":"welcome","session":"s","user":null,"heartbeat_s":1,"sync_seq":0,"epoch":"e"}"#))
        #expect(session.liveness.limit == .seconds(4))
        session.heard(now: start + .seconds(3))
        #expect(session.receive(Self.message(#"{"type":"heartbeat"}"#)).actions.isEmpty)
        #expect(session.checkLink(now: start + .seconds(5)) == .alive(until: start + .seconds(7)))
        #expect(session.checkLink(now: start + .milliseconds(7100)) == .dead(silence: .milliseconds(4100)))
        #expect(session.stats.deadLinks == 1)
        session.closed()
        #expect(session.checkLink(now: start + .seconds(60)) == .closed)
    }

    @Test("a hub that names no epoch (before heartbeats) leaves the link unwatched: its silence proves nothing")
    func livenessWithAnOlderHub() {
        var session = ClientSession(app: nil, scope: Self.device)
        let start = ContinuousClock.now
        session.connecting(now: start)
        _ = session.opened(token: nil, device: "d-1")
        _ = session.receive(Self.message(#"{"type":"welcome","session":"s","user":null,"heartbeat_s":1,"sync_seq":0}"#))
        session.heard(now: start + .seconds(1))
        #expect(session.checkLink(now: start + .seconds(600)) == .closed)
        #expect(session.stats.deadLinks == 0)
    }

    @Test("a rendered owed to one hub state is not sent to another")
    func renderedOwedIsForgottenWithTheEpoch() {
        var session = Self.welcomed("home")
        session.closed()
        #expect(session.rendered("home", version: 3).isEmpty)  // owed until the next welcome
        _ = session.opened(token: nil, device: "d-1")
        let (actions, _) = session.receive(
            Self.message(#"{"type":"welcome","session":"s-2","user":null,"heartbeat_s":25,"sync_seq":0,"epoch":"e-2"}"#))
        #expect(!actions.contains { if case .send(let message) = $0 { message["type"] == .string("rendered") } else { false } })
        var same = Self.welcomed("home")
        same.closed()
        _ = same.rendered("home", version: 3)
        _ = same.opened(token: nil, device: "d-1")
        let (again, _) = same.receive(
            Self.message(#"{"type":"welcome","session":"s-2","user":null,"heartbeat_s":25,"sync_seq":7,"epoch":"e-1"}"#))
        #expect(again.contains { if case .send(let message) = $0 { message["type"] == .string("rendered") } else { false } })
    }

    @Test("reconnect delays double from 0.5 s to 30 s; a 1001 starts over and caps them at 4 s for a minute")
    func reconnectSchedule() {
        var schedule = ReconnectSchedule()
        let t = ContinuousClock.now
        func next(_ code: UInt16, at offset: Duration) -> Duration {
            schedule.dropped(
                code: code, now: t + offset, random: 0.999_999, backoff: Backoff(), goingAwayCap: .seconds(4),
                goingAwayWindow: .seconds(60))
        }
        let ordinary = (0..<8).map { _ in next(1006, at: .zero) }.map { Int(($0 / .milliseconds(1)).rounded()) }
        #expect(ordinary == [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000])
        let restart = [next(1001, at: .seconds(1))] + (0..<5).map { _ in next(1006, at: .seconds(30)) }
        #expect(restart.map { Int(($0 / .milliseconds(1)).rounded()) } == [500, 1000, 2000, 4000, 4000, 4000])
        #expect(Int((next(1006, at: .seconds(62)) / .milliseconds(1)).rounded()) == 30000)  // longer than a minute: an outage
        schedule.welcomed()
        #expect(Int((next(1006, at: .seconds(70)) / .milliseconds(1)).rounded()) == 500)
    }

    @Test("a refused subscribe ends that subscription and names its screen")
    func refusedSubscribe() {
        var session = Self.welcomed("nope")
        let (actions, fatal) = session.receive(Self.message(#"{"type":"error","code":"unknown_screen","message":"no screen","ref":"subscribe"}"#))
        #expect(fatal == nil)
        #expect(actions.contains(.emit(.error(HubError(code: "unknown_screen", message: "no screen", ref: "subscribe", screen: "nope")))))
        #expect(session.screens["nope"] == nil)
        let (_, unauthorized) = session.receive(Self.message(#"{"type":"error","code":"unauthorized","message":"expired","ref":"hello"}"#))
        #expect(unauthorized?.code == "unauthorized")
    }

    @Test("the stored form is the canonical {epoch, hash, tree, version} (the JavaScript client's) and reads back only while the hash holds")
    func storedForm() {
        let tree = Self.message(#"{"b":[1,"\u2028"],"a":{"é":-0}}"#)
        let hash = ScreenHash.of(tree)
        let stored = StoredScreen.form(epoch: "e-1", canonical: JSONWriter.write(tree), version: 12, hash: hash)
        #expect(
            stored
                == JSONWriter.string(
                    .object(["epoch": .string("e-1"), "hash": .string(hash), "tree": tree, "version": .number(12)])))
        #expect(StoredScreen(stored: stored) == StoredScreen(tree: tree, version: 12, hash: hash, epoch: "e-1"))
        #expect(StoredScreen(stored: stored.replacingOccurrences(of: "\"a\"", with: "\"c\"")) == nil)
        let unlabelled = StoredScreen.form(epoch: nil, canonical: JSONWriter.write(tree), version: 12, hash: hash)
        #expect(StoredScreen(stored: unlabelled)?.epoch == nil && unlabelled.hasPrefix(#"{"hash":"#))
        #expect(ScopeRecord(stored: ScopeRecord(epoch: "e-1", lastSync: 7).stored) == ScopeRecord(epoch: "e-1", lastSync: 7))
        #expect(ScopeRecord(stored: "garbage") == ScopeRecord(epoch: nil, lastSync: nil))
    }
}

extension [UInt8] {
    /// RFC 4648 §5 base64url without padding (a JWT's segments).
    var base64URL: String {
        Data(self).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
