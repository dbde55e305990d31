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

    static func reports(_ actions: [ClientSession.Action]) -> [String] {
        sent(actions).filter { $0["type"] == .string("rendered") || $0["type"] == .string("render_error") }
            .map { JSONWriter.string(.object($0)) }
    }

    @Test("renderFailed while live sends render_error with the held tree's hash when it is that version, and the error's component")
    func renderFailedLive() {
        var session = Self.welcomed("home")
        let tree = Self.message(#"{"title":"Hi"}"#)
        _ = session.receive(Self.snapshot(tree, version: 3))
        let report = RenderErrorReport(CarouselFailed())
        #expect(Self.reports(session.renderFailed("home", version: 3, report: report)) == [
            #"{"component":"Carousel","hash":"\#(ScreenHash.of(tree))","message":"slide 2 has no image","screen":"home","type":"render_error","version":3}"#
        ])
        // Another version than the one held: no hash, unless the caller knows it.
        #expect(Self.reports(session.renderFailed("home", version: 2, report: report)) == [
            #"{"component":"Carousel","message":"slide 2 has no image","screen":"home","type":"render_error","version":2}"#
        ])
        #expect(Self.reports(session.renderFailed("home", version: 2, report: report, hash: "h2")).first?.contains(#""hash":"h2""#) == true)
    }

    @Test("render reports made while not live: the latest per screen goes after the next welcome; another hub state gets none")
    func renderReportsOwed() {
        var session = Self.welcomed("home", "menu")
        session.closed()
        let boom = RenderErrorReport(CarouselFailed())
        #expect(session.rendered("home", version: 3).isEmpty)
        #expect(session.renderFailed("home", version: 4, report: boom, hash: "h4").isEmpty)  // replaces home's rendered
        #expect(session.rendered("menu", version: 2).isEmpty)
        let welcome = #"{"type":"welcome","session":"s-2","user":null,"heartbeat_s":25,"sync_seq":7,"epoch":"e-1"}"#
        #expect(Self.reports(session.receive(Self.message(welcome)).actions) == [
            #"{"component":"Carousel","hash":"h4","message":"slide 2 has no image","screen":"home","type":"render_error","version":4}"#,
            #"{"screen":"menu","type":"rendered","version":2}"#,
        ])
        session.closed()
        _ = session.renderFailed("home", version: 5, report: boom, hash: "h5")
        _ = session.rendered("home", version: 5)  // drawn after all: the rendered replaces the error
        #expect(Self.reports(session.receive(Self.message(welcome)).actions) == [#"{"screen":"home","type":"rendered","version":5}"#])
        #expect(Self.reports(session.receive(Self.message(welcome)).actions).isEmpty)  // sent once
        session.closed()
        _ = session.renderFailed("home", version: 6, report: boom, hash: "h6")
        let other = #"{"type":"welcome","session":"s-3","user":null,"heartbeat_s":25,"sync_seq":0,"epoch":"e-2"}"#
        #expect(Self.reports(session.receive(Self.message(other)).actions).isEmpty)
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

/// Issue 26: the variants that shaped each screen, and `track` events.
extension ClientSessionTests {
    static func screenMessage(_ type: String, _ tree: JSONValue?, version: Int, from: Int? = nil, ops: String? = nil, variants: String?)
        -> JSONValue
    {
        var object: JSONObject = ["type": .string(type), "screen": .string("home"), "version": .number(Double(version))]
        if let tree { object["hash"] = .string(ScreenHash.of(tree)) }
        if type == "snapshot", let tree { object["tree"] = tree }
        if let from { object["from"] = .number(Double(from)) }
        if let ops { object["ops"] = message(ops) }
        if let variants { object["variants"] = message(variants) }
        return .object(object)
    }

    static func delivered(_ actions: [ClientSession.Action]) -> [TreeMeta] {
        actions.compactMap { if case .deliver(_, _, let meta) = $0 { meta } else { nil } }
    }

    static func stored(_ actions: [ClientSession.Action]) -> [String] {
        actions.compactMap { if case .store(let key, let value?) = $0, key.contains(":screen:") { value } else { nil } }
    }

    @Test("variants: a snapshot sets them (absent: none), a patch without them keeps them, a patch with them replaces them ({} clears), unchanged sets them")
    func variantsFollowTheRendition() {
        var session = Self.welcomed("home")
        let v1 = Self.message(#"{"a":1}"#)
        let snapshot = session.receive(Self.screenMessage("snapshot", v1, version: 1, variants: #"{"layout":"compact","color":"red"}"#))
        #expect(Self.delivered(snapshot.actions).map(\.variants) == [["layout": "compact", "color": "red"]])
        let v2 = Self.message(#"{"a":2}"#)
        let kept = session.receive(
            Self.screenMessage("patch", v2, version: 2, from: 1, ops: #"[{"op":"replace","path":"/a","value":2}]"#, variants: nil))
        #expect(Self.delivered(kept.actions).map(\.variants) == [["layout": "compact", "color": "red"]])
        let v3 = Self.message(#"{"a":3}"#)
        let replaced = session.receive(Self.screenMessage(
            "patch", v3, version: 3, from: 2, ops: #"[{"op":"replace","path":"/a","value":3}]"#, variants: #"{"layout":"wide"}"#))
        #expect(Self.delivered(replaced.actions).map(\.variants) == [["layout": "wide"]])
        let v4 = Self.message(#"{"a":4}"#)
        let cleared = session.receive(
            Self.screenMessage("patch", v4, version: 4, from: 3, ops: #"[{"op":"replace","path":"/a","value":4}]"#, variants: "{}"))
        #expect(Self.delivered(cleared.actions).map(\.variants) == [[:]])
        #expect(session.held("home")?.variants == [:])
        // unchanged names the rendition's variants like a snapshot: they replace what was held.
        let unchanged = session.receive(Self.screenMessage("unchanged", v4, version: 4, variants: #"{"layout":"compact"}"#))
        #expect(Self.delivered(unchanged.actions).map(\.variants) == [["layout": "compact"]])
        let unchangedWithout = session.receive(Self.screenMessage("unchanged", v4, version: 4, variants: nil))
        #expect(Self.delivered(unchangedWithout.actions).map(\.variants) == [[:]])
        let snapshotWithout = session.receive(Self.screenMessage("snapshot", v4, version: 4, variants: nil))
        #expect(Self.delivered(snapshotWithout.actions).map(\.variants) == [[:]])
    }

    @Test("a change of variants alone (a patch without operations, same version) is delivered and stored")
    func variantsAloneChange() {
        var session = Self.welcomed("home")
        let tree = Self.message(#"{"a":1}"#)
        _ = session.receive(Self.screenMessage("snapshot", tree, version: 5, variants: nil))
        let (actions, _) = session.receive(Self.screenMessage("patch", tree, version: 5, from: 5, ops: "[]", variants: #"{"exp":"b"}"#))
        #expect(Self.delivered(actions) == [
            TreeMeta(version: 5, hash: ScreenHash.of(tree), source: .patch, from: 5, patch: JSONPatch(), variants: ["exp": "b"])
        ])
        #expect(Self.stored(actions).map { StoredScreen(stored: $0)?.variants } == [["exp": "b"]])
        // The same again (a patch that names the map it already has) is nothing new.
        let (again, _) = session.receive(Self.screenMessage("patch", tree, version: 5, from: 5, ops: "[]", variants: #"{"exp":"b"}"#))
        #expect(Self.delivered(again).isEmpty && Self.stored(again).isEmpty)
        #expect(session.stats.resubscribes == 0)
    }

    @Test("stored variants come back with the cached tree, and a patch after the restart that does not name them keeps them")
    func variantsSurviveARestart() throws {
        var first = Self.welcomed("home")
        let v1 = Self.message(#"{"a":1}"#)
        let (actions, _) = first.receive(Self.screenMessage("snapshot", v1, version: 1, variants: #"{"exp":"b"}"#))
        let stored = try #require(Self.stored(actions).first.flatMap(StoredScreen.init(stored:)))
        #expect(stored.variants == ["exp": "b"] && stored.epoch == "e-1")
        var second = ClientSession(app: nil, scope: Self.device, record: ScopeRecord(epoch: "e-1", lastSync: 7))
        let cached = second.subscribe("home", stored: stored)
        #expect(Self.delivered(cached).map(\.variants) == [["exp": "b"]])
        _ = second.receive(Self.message(#"{"type":"welcome","session":"s-2","user":null,"heartbeat_s":25,"sync_seq":7,"epoch":"e-1"}"#))
        let v2 = Self.message(#"{"a":2}"#)
        let (patched, _) = second.receive(
            Self.screenMessage("patch", v2, version: 2, from: 1, ops: #"[{"op":"replace","path":"/a","value":2}]"#, variants: nil))
        #expect(Self.delivered(patched).map(\.variants) == [["exp": "b"]])
        // An unchanged that names other variants (the experiment changed while the app was away):
        // delivered again, although the tree is the same, and stored.
        var third = ClientSession(app: nil, scope: Self.device, record: ScopeRecord(epoch: "e-1", lastSync: 7))
        _ = third.subscribe("home", stored: stored)
        _ = third.receive(Self.message(#"{"type":"welcome","session":"s-3","user":null,"heartbeat_s":25,"sync_seq":7,"epoch":"e-1"}"#))
        let (unchanged, _) = third.receive(Self.screenMessage("unchanged", v1, version: 1, variants: nil))
        #expect(Self.delivered(unchanged).map(\.variants) == [[:]])
        #expect(Self.stored(unchanged).map { StoredScreen(stored: $0)?.variants } == [[:]])
    }

    @Test("the stored form has variants between tree and version, only when there are some")
    func storedFormWithVariants() {
        let tree = Self.message(#"{"a":1}"#)
        let hash = ScreenHash.of(tree)
        let form = StoredScreen.form(
            epoch: "e-1", canonical: JSONWriter.write(tree), version: 3, hash: hash, variants: ["z": "b", "a": "c"])
        #expect(form == #"{"epoch":"e-1","hash":"\#(hash)","tree":{"a":1},"variants":{"a":"c","z":"b"},"version":3}"#)
        #expect(StoredScreen(stored: form)?.variants == ["a": "c", "z": "b"])
        let plain = StoredScreen.form(epoch: "e-1", canonical: JSONWriter.write(tree), version: 3, hash: hash)
        #expect(!plain.contains("variants") && StoredScreen(stored: plain)?.variants == [:])
    }

    static func sentTypes(_ actions: [ClientSession.Action]) -> [String] {
        sent(actions).map { message in
            let type = message["type"]?.stringValue ?? ""
            return type == "track" ? "track:" + (message["event"]?.stringValue ?? "") : type
        }
    }

    @Test("track is sent at once when live; while not, it waits and goes after the welcome's subscribes, the newest 100")
    func trackQueue() throws {
        var session = Self.welcomed("home")
        #expect(Self.sentTypes(session.track(try Track(event: "now", value: 1))) == ["track:now"])
        session.closed()
        for i in 0..<(ClientSession.maxQueuedTracks + 5) {
            #expect(session.track(try Track(event: "e\(i)", value: nil)).isEmpty)
        }
        #expect(session.stats.droppedTracks == 5 && session.pendingTracks.count == ClientSession.maxQueuedTracks)
        _ = session.rendered("home", version: 1)
        _ = session.opened(token: nil, device: "d-1")
        let (actions, _) = session.receive(
            Self.message(#"{"type":"welcome","session":"s-2","user":null,"heartbeat_s":25,"sync_seq":7,"epoch":"e-1"}"#))
        let types = Self.sentTypes(actions)
        #expect(types.prefix(2) == ["subscribe", "rendered"])
        #expect(Array(types.dropFirst(2)) == (5..<(ClientSession.maxQueuedTracks + 5)).map { "track:e\($0)" })
        #expect(session.pendingTracks.isEmpty && session.stats.tracks == 1 + ClientSession.maxQueuedTracks)
        // Sent once: the next welcome has none to send.
        session.closed()
        let (next, _) = session.receive(
            Self.message(#"{"type":"welcome","session":"s-3","user":null,"heartbeat_s":25,"sync_seq":7,"epoch":"e-1"}"#))
        #expect(!Self.sentTypes(next).contains { $0.hasPrefix("track:") })
    }

    @Test("a client closed for good drops the track events waiting and those made later")
    func trackAfterTheEnd() throws {
        var session = Self.welcomed()
        session.closed()
        _ = session.track(try Track(event: "a", value: nil))
        _ = session.track(try Track(event: "b", value: nil))
        session.end()
        #expect(session.pendingTracks.isEmpty && session.stats.droppedTracks == 2)
        #expect(session.track(try Track(event: "c", value: nil)).isEmpty)
        #expect(session.pendingTracks.isEmpty && session.stats.droppedTracks == 3 && session.stats.tracks == 0)
    }

    @Test("track events waiting when another user signs in are dropped, never sent as that user's; a new hub state keeps them")
    func trackBelongsToItsUser() throws {
        let alice = StorageScope(token: Self.jwt(sub: "alice"), device: nil)
        let bob = StorageScope(token: Self.jwt(sub: "bob"), device: nil)
        var session = ClientSession(app: nil, scope: alice, record: ScopeRecord(epoch: "e-1", lastSync: 3))
        _ = session.track(try Track(event: "alice.bought", value: 9))
        _ = session.enter(bob, record: ScopeRecord(epoch: "e-1", lastSync: nil), stored: [:])
        #expect(session.stats.droppedTracks == 1 && session.pendingTracks.isEmpty)
        _ = session.track(try Track(event: "bob.bought", value: nil))
        let (actions, _) = session.receive(
            Self.message(#"{"type":"welcome","session":"s","user":"bob","heartbeat_s":25,"sync_seq":0,"epoch":"e-2"}"#))
        #expect(Self.sentTypes(actions) == ["track:bob.bought"])
    }
}

extension [UInt8] {
    /// RFC 4648 §5 base64url without padding (a JWT's segments).
    var base64URL: String {
        Data(self).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
