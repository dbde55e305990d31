import Foundation
import ScreenTree
import Synchronization
import Testing

@testable import PushHubClient

/// `setPushToken` and `handlePush` through `PushHubClient`, the hub played by a script.
@Suite struct ClientPushTokenTests {
    static let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1NDIifQ.sig"  // {"sub":"u42"}

    static func waitFor(_ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition()
    }

    @Test("a signed-in client without a device gets one for its push token, reconnects with it, and sends the token")
    func deviceGeneratedForPush() async throws {
        let transport = ScriptedTransport()
        let storage = MemoryStorage()
        let client = PushHubClient(
            url: HubURL("ws://127.0.0.1:1/v1/connect")!, credentials: .token(Self.token), storage: storage,
            transport: transport)
        defer { client.close() }
        await client.flush()
        transport.hubSends(ScriptedTransport.welcome)
        await client.flush()
        #expect(transport.sent.first?["device"] == nil)
        client.setPushToken(.apns(deviceToken: [1, 2], topic: "com.example.app"))
        await client.flush()
        let device = try #require(storage.value(forKey: "device"))
        #expect(transport.opens == 2)
        let hellos = transport.sent.filter { $0["type"]?.stringValue == "hello" }
        #expect(hellos.count == 2 && hellos[1]["device"]?.stringValue == device)
        transport.hubSends(ScriptedTransport.welcome)
        await client.flush()
        #expect(transport.sentTypes.last == "push_token")
        #expect(transport.sent.last?["token"]?.stringValue == "0102")
        #expect(storage.value(forKey: "push_token") != nil)

        // A restart sends the stored token after its welcome, with the stored device.
        let restarted = ScriptedTransport()
        let again = PushHubClient(
            url: HubURL("ws://127.0.0.1:1/v1/connect")!, credentials: .token(Self.token), storage: storage,
            transport: restarted)
        defer { again.close() }
        await again.flush()
        #expect(restarted.sent.first?["device"]?.stringValue == device)
        restarted.hubSends(ScriptedTransport.welcome)
        await again.flush()
        #expect(restarted.sentTypes.last == "push_token" && restarted.opens == 1)
    }

    @Test("handlePush answers whether the payload was PushHub's and completes once the handlers returned")
    func handlePushCompletes() async {
        let transport = ScriptedTransport()
        let client = PushHubClient(
            url: HubURL("ws://127.0.0.1:1/v1/connect")!, credentials: .device("d-1"), transport: transport)
        defer { client.close() }
        let recorder = Recorder()
        recorder.attach(client, screen: nil)
        // What each completion saw: how many syncs the app had been handed.
        let completions = Mutex<[Int]>([])
        let complete: @Sendable () -> Void = {
            let handed = recorder.syncs.withLock { $0.count }
            completions.withLock { $0.append(handed) }
        }
        #expect(!client.handlePush(["aps": ["alert": "hello"]], completion: complete))
        let payload: [AnyHashable: Any] = ["pushhub": #"{"type":"sync","id":"s-5","seq":5,"scope":"bundle"}"#]
        #expect(client.handlePush(payload, completion: complete))
        #expect(client.handlePush(payload, completion: complete))
        #expect(Self.waitFor { completions.withLock { $0.count } == 3 })
        #expect(completions.withLock { $0.sorted() }.last == 1)
        await client.flush()
        #expect(recorder.syncs.withLock { $0.map(\.sync.id) } == ["s-5"])
        #expect(client.stats.pushedSyncs == 1 && client.stats.duplicateSyncs == 1)
        // Acked after the welcome (it was not live when the app returned).
        transport.hubSends(ScriptedTransport.welcome)
        await client.flush()
        #expect(transport.sent.contains { $0["type"]?.stringValue == "ack" && $0["sync"]?.stringValue == "s-5" })
    }
}
