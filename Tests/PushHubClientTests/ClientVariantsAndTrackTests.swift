import Foundation
import Testing

@testable import PushHubClient

/// Issue 26 through the public API, with the hub played by a `ScriptedTransport`: the variants a
/// tree came with, and `track`.
@Suite struct ClientVariantsAndTrackTests {
    static func client(_ transport: ScriptedTransport) -> PushHubClient {
        var options = PushHubClient.Options()
        options.random = { 0.5 }
        return PushHubClient(
            url: HubURL("ws://127.0.0.1:1/v1/connect")!, credentials: .device("d-1"), transport: transport,
            options: options)
    }

    @Test(
        "meta.variants comes from the snapshot, stays through a patch that does not name them, and changes with one that does"
    )
    func variantsReachTheApp() async throws {
        let transport = ScriptedTransport()
        let client = Self.client(transport)
        defer { client.close() }
        let recorder = Recorder()
        recorder.attach(client, screen: "home")
        await client.flush()  // the connection is open and the hello sent
        transport.hubSends(ScriptedTransport.welcome)
        let tree = try JSONReader.parse(#"{"title":"Hi"}"#)
        let hash = ScreenHash.of(tree)
        transport.hubSends(
            #"{"type":"snapshot","screen":"home","version":3,"hash":"\#(hash)","tree":{"title":"Hi"},"variants":{"layout":"compact"}}"#
        )
        let two = try JSONReader.parse(#"{"title":"Hey"}"#)
        transport.hubSends(
            #"{"type":"patch","screen":"home","from":3,"version":4,"hash":"\#(ScreenHash.of(two))","ops":[{"op":"replace","path":"/title","value":"Hey"}]}"#
        )
        transport.hubSends(
            #"{"type":"patch","screen":"home","from":4,"version":4,"hash":"\#(ScreenHash.of(two))","ops":[],"variants":{}}"#
        )
        await client.flush()
        let metas = recorder.trees.withLock { $0.map(\.meta) }
        #expect(metas.map(\.variants) == [["layout": "compact"], ["layout": "compact"], [:]])
        #expect(metas.map(\.source) == [.snapshot, .patch, .patch])
        let subscription = client.subscribe("home")
        await client.flush()
        #expect(subscription.current?.meta.variants == [:])
        #expect(transport.sentTypes.filter { $0 == "rendered" }.count == 3)
    }

    @Test(
        "track made before the welcome is sent after it (after the subscribe), at once when live; a refused one returns false as a bad_track error; after close() none goes"
    )
    func trackThroughTheClient() async throws {
        let transport = ScriptedTransport()
        let client = Self.client(transport)
        let recorder = Recorder()
        recorder.attach(client, screen: "home")
        #expect(client.track("app.open"))
        #expect(client.track("purchase", value: 12.5))
        await client.flush()
        #expect(transport.sentTypes == ["hello"])
        transport.hubSends(ScriptedTransport.welcome)
        await client.flush()
        #expect(transport.sentTypes == ["hello", "subscribe", "track:app.open", "track:purchase"])
        #expect(transport.sent.last == (try JSONReader.parse(#"{"type":"track","event":"purchase","value":12.5}"#)))
        #expect(client.track("cart:add"))
        #expect(!client.track("add to cart"))
        #expect(!client.track("purchase", value: .nan))
        await client.flush()
        #expect(transport.sentTypes.suffix(1) == ["track:cart:add"])
        let errors = recorder.events.withLock { events in
            events.compactMap { if case .error(let error) = $0 { error } else { nil } }
        }
        #expect(errors.map(\.code) == ["bad_track", "bad_track"] && errors.allSatisfy { $0.ref == "track" })
        #expect(client.stats.tracks == 3 && client.stats.droppedTracks == 0)
        client.close()
        #expect(client.track("late"))  // valid, but the client is closed: dropped
        await client.flush()
        #expect(!transport.sentTypes.contains("track:late"))
        #expect(client.stats.droppedTracks == 1 && client.stats.tracks == 3)
    }
}
