import Foundation
import ScreenTree
import Testing

@testable import PushHubClient

/// Push tokens and syncs from silent pushes (DESIGN §17): the token's wire and stored forms, the
/// payloads `handlePush` understands, and the session's rules (sent after every welcome; one
/// hand-over per sync id whichever way it came; a push never moves `lastSync`).
@Suite struct ClientPushTests {
    static func message(_ text: String) -> JSONValue { (try? JSONReader.parse(text)) ?? .null }
    static func text(_ object: JSONObject) -> String { JSONWriter.string(.object(object)) }
    static let device = StorageScope(token: nil, device: "d-1")
    static let welcome = message(
        #"{"type":"welcome","session":"s-1","user":null,"heartbeat_s":25,"sync_seq":7,"epoch":"e-1"}"#)
    static let apns = PushToken.apns(deviceToken: [0x0A, 0xBC, 0xFF, 0x00], topic: "com.example.app")

    static func sent(_ actions: [ClientSession.Action]) -> [String] {
        actions.compactMap { if case .send(let message) = $0 { text(message) } else { nil } }
    }

    static func scheduled(_ actions: [ClientSession.Action]) -> [String] {
        actions.compactMap { if case .schedule(let sync) = $0 { sync.id } else { nil } }
    }

    static func stored(_ actions: [ClientSession.Action], _ key: String) -> String?? {
        actions.compactMap { if case .store(key, let value) = $0 { value } else { nil } }.last
    }

    static func sync(_ id: String, seq: Int) -> JSONValue {
        message(#"{"type":"sync","id":"\#(id)","seq":\#(seq),"reason":"r","scope":"bundle","jitter_ms":0}"#)
    }

    static func live(pushToken: PushToken? = nil, handled: [String] = []) -> ClientSession {
        var session = ClientSession(
            app: nil, scope: device, record: ScopeRecord(epoch: "e-1", lastSync: 7), handled: handled,
            pushToken: pushToken)
        _ = session.receive(welcome)
        return session
    }

    // MARK: - PushToken

    @Test("an APNs token is sent as lower-case hex with its topic; an FCM token as given, without one")
    func tokenWireForm() {
        #expect(
            Self.text(Self.apns.message)
                == #"{"provider":"apns","token":"0abcff00","topic":"com.example.app","type":"push_token"}"#)
        #expect(PushToken.apns(deviceToken: Data([0xDE, 0xAD]), topic: "t").token == "dead")
        #expect(Self.text(PushToken.fcm("f:1-x").message) == #"{"provider":"fcm","token":"f:1-x","type":"push_token"}"#)
        #expect(Self.text(PushToken.removal) == #"{"token":null,"type":"push_token"}"#)
    }

    @Test("a stored token reads back as itself; an unreadable one as none")
    func tokenStoredForm() {
        #expect(PushToken(stored: Self.apns.stored) == Self.apns)
        #expect(PushToken(stored: PushToken.fcm("x").stored) == .fcm("x"))
        #expect(PushToken(stored: "garbage") == nil)
        #expect(PushToken(stored: #"{"provider":"webpush","token":"x"}"#) == nil)
    }

    // MARK: - Payloads

    @Test("the sync is found in APNs userInfo, in an FCM data map's JSON string, and nowhere else")
    func payloads() {
        let apns: [AnyHashable: Any] = [
            "aps": ["content-available": 1],
            "pushhub": [
                "type": "sync", "id": "s-12", "seq": 12, "reason": "hotfix", "mandatory": true,
            ] as [String: Any],
        ]
        let found = PushedSync.message(in: apns)
        #expect(found?["id"]?.stringValue == "s-12" && found?["seq"]?.intValue == 12)
        #expect(found?["mandatory"] == .bool(true))
        let fcm: [AnyHashable: Any] = ["pushhub": #"{"type":"sync","id":"s-3","seq":3,"scope":"config"}"#]
        #expect(PushedSync.message(in: fcm)?["scope"]?.stringValue == "config")
        #expect(PushedSync.message(in: ["aps": ["alert": "hi"]]) == nil)
        #expect(PushedSync.message(in: ["pushhub": "{not json"]) == nil)
        #expect(PushedSync.message(in: ["pushhub": #"{"type":"sync","seq":3}"#]) == nil)  // no id
        #expect(PushedSync.message(in: ["pushhub": #"{"type":"other","id":"s-1"}"#]) == nil)
        #expect(PushedSync.message(in: ["pushhub": 42]) == nil)
    }

    // MARK: - The token in the session

    @Test("the push token goes after every welcome, at once when set while live, and not again when unchanged")
    func tokenSent() {
        var session = Self.live(pushToken: Self.apns)
        var again = session
        _ = again.receive(Self.welcome)
        let (actions, _) = session.receive(Self.welcome)
        #expect(Self.sent(actions).last == Self.text(Self.apns.message))
        #expect(session.setPushToken(Self.apns).isEmpty)
        let fcm = session.setPushToken(.fcm("f-1"))
        #expect(Self.sent(fcm) == [Self.text(PushToken.fcm("f-1").message)])
        #expect(Self.stored(fcm, StorageScope.pushTokenKey) == .some(PushToken.fcm("f-1").stored))
    }

    @Test("removing the token sends a null token now when live, else once after the next welcome")
    func tokenRemoved() {
        var live = Self.live(pushToken: Self.apns)
        let removed = live.setPushToken(nil)
        #expect(Self.sent(removed) == [Self.text(PushToken.removal)])
        #expect(Self.stored(removed, StorageScope.pushTokenKey) == .some(nil))

        var offline = Self.live(pushToken: Self.apns)
        offline.closed()
        #expect(Self.sent(offline.setPushToken(nil)).isEmpty)
        #expect(Self.sent(offline.receive(Self.welcome).actions).last == Self.text(PushToken.removal))
        offline.closed()
        #expect(!Self.sent(offline.receive(Self.welcome).actions).contains(Self.text(PushToken.removal)))
        // Without a token there is nothing to remove.
        var none = Self.live()
        #expect(Self.sent(none.setPushToken(nil)).isEmpty)
    }

    // MARK: - Syncs from pushes

    @Test("a pushed sync is handed over at once and acked, but last_sync moves only when the socket brings it")
    func pushThenSocket() {
        var session = Self.live()
        let pushed = session.pushed(Self.sync("s-9", seq: 9))
        #expect(Self.scheduled(pushed) == ["s-9"])
        let handled = session.syncHandled("s-9")
        #expect(Self.sent(handled) == [#"{"sync":"s-9","type":"ack"}"#])
        #expect(Self.stored(handled, Self.device.handledSyncsKey) == .some(#"["s-9"]"#))
        #expect(session.lastSync == 7)  // s-8 may still come over the socket
        let replay = session.receive(Self.sync("s-9", seq: 9)).actions
        #expect(Self.scheduled(replay).isEmpty && session.stats.duplicateSyncs == 1)
        #expect(session.lastSync == 9)
        #expect(Self.stored(replay, Self.device.recordKey) == .some(#"{"epoch":"e-1","last_sync":9}"#))
    }

    @Test("a sync the socket brought first is not handed over again by its push")
    func socketThenPush() {
        var session = Self.live()
        #expect(Self.scheduled(session.receive(Self.sync("s-8", seq: 8)).actions) == ["s-8"])
        #expect(session.pushed(Self.sync("s-8", seq: 8)).isEmpty)
        #expect(session.stats.duplicateSyncs == 1 && session.stats.pushedSyncs == 0)
    }

    @Test("the socket's copy of a push still waiting for the app holds last_sync back until the app returns")
    func replayWhilePushWaits() {
        var session = Self.live()
        _ = session.pushed(Self.sync("s-9", seq: 9))
        _ = session.receive(Self.sync("s-9", seq: 9))
        #expect(session.lastSync == 8)
        _ = session.syncHandled("s-9")
        #expect(session.lastSync == 9)
    }

    @Test("handled ids are stored (the last 64) and a new session hands none of them over again")
    func handledAcrossRestarts() {
        var session = Self.live()
        var stored: String??
        for seq in 10..<80 {
            _ = session.receive(Self.sync("s-\(seq)", seq: seq))
            stored = Self.stored(session.syncHandled("s-\(seq)"), Self.device.handledSyncsKey)
        }
        let ids = (16..<80).map { "s-\($0)" }
        #expect(stored == .some(JSONWriter.string(.array(ids.map(JSONValue.string)))))
        var restarted = Self.live(handled: ids)
        #expect(restarted.pushed(Self.sync("s-79", seq: 79)).isEmpty)
        #expect(Self.scheduled(restarted.receive(Self.sync("s-16", seq: 16)).actions).isEmpty)
        #expect(Self.scheduled(restarted.pushed(Self.sync("s-15", seq: 15))) == ["s-15"])
    }

    @Test("another hub state forgets the handled ids (its syncs are numbered anew)")
    func epochChangeForgetsHandled() {
        var session = Self.live(handled: ["s-1"])
        let (actions, _) = session.receive(
            Self.message(#"{"type":"welcome","session":"s-2","heartbeat_s":25,"sync_seq":0,"epoch":"e-2"}"#))
        #expect(Self.stored(actions, Self.device.handledSyncsKey) == .some(nil))
        #expect(Self.scheduled(session.pushed(Self.sync("s-1", seq: 1))) == ["s-1"])
    }
}
