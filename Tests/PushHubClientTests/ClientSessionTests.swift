import Testing

@testable import PushHubClient
import ScreenTree

/// The client's protocol rules, fed message by message (no hub, no sockets).
@Suite struct ClientSessionTests {
    static func message(_ text: String) -> JSONValue { (try? JSONReader.parse(text)) ?? .null }

    static func sent(_ actions: [ClientSession.Action]) -> [JSONObject] {
        actions.compactMap { if case .send(let message) = $0 { message } else { nil } }
    }

    static func welcomed(_ screens: String...) -> ClientSession {
        var session = ClientSession(app: nil, lastSync: nil)
        for screen in screens { _ = session.subscribe(screen, cached: nil) }
        _ = session.receive(message(#"{"type":"welcome","session":"s-1","user":null,"heartbeat_s":25,"sync_seq":7}"#))
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
        var session = ClientSession(app: AppInfo(platform: "ios", version: "5.3.0"), lastSync: 4)
        let tree = Self.message(#"{"title":"Hi"}"#)
        _ = session.subscribe("home", cached: (tree, 3, ScreenHash.of(tree)))
        _ = session.subscribe("menu", cached: nil)
        let hello = Self.sent(session.opened(token: "t", device: nil))
        #expect(JSONWriter.string(.object(hello[0])) == #"{"app":{"platform":"ios","version":"5.3.0"},"last_sync":4,"protocol":1,"token":"t","type":"hello"}"#)
        let (actions, fatal) = session.receive(Self.message(#"{"type":"welcome","session":"s","user":"u","heartbeat_s":25,"sync_seq":9}"#))
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
        #expect(first.count == 1)
        #expect(session.receive(sync).actions.isEmpty)
        #expect(session.stats.duplicateSyncs == 1)
        _ = session.receive(Self.message(#"{"type":"sync","id":"s-10","seq":10,"reason":"r","scope":"s","jitter_ms":0}"#))
        let handled = session.syncHandled("s-10")
        #expect(session.lastSync == 8)  // s-9 still waits for its jitter
        #expect(Self.sent(handled).map { JSONWriter.string(.object($0)) } == [#"{"sync":"s-10","type":"ack"}"#])
        _ = session.syncHandled("s-9")
        #expect(session.lastSync == 10)
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

    @Test("the stored form is the canonical {hash, tree, version} (the JavaScript client's) and reads back only while the hash holds")
    func storedForm() {
        let tree = Self.message(#"{"b":[1,"\u2028"],"a":{"é":-0}}"#)
        let hash = ScreenHash.of(tree)
        let stored = ClientSession.storedForm(canonical: JSONWriter.write(tree), 12, hash)
        #expect(stored == JSONWriter.string(.object(["hash": .string(hash), "tree": tree, "version": .number(12)])))
        #expect(ClientSession.parseStored(stored).map { $0.version } == 12)
        #expect(ClientSession.parseStored(stored.replacingOccurrences(of: "\"a\"", with: "\"c\"")) == nil)
    }
}
