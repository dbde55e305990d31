import Foundation
import Synchronization
import Testing

@testable import PushHubClient

/// A render error that names its component, as an app's would (the tests' one).
struct CarouselFailed: RenderErrorDescribing, CustomStringConvertible {
    var component: String? { "Carousel" }
    var description: String { "slide 2 has no image" }
}

/// Issue 27 through the public API, with the hub played by a `ScriptedTransport`: a tree callback
/// that throws reports `render_error` instead of `rendered`, and `renderFailed` (DESIGN §15).
@Suite struct ClientRenderErrorTests {
    static func client(_ transport: ScriptedTransport, autoRendered: Bool = true) -> PushHubClient {
        var options = PushHubClient.Options()
        options.random = { 0 }  // reconnect at once
        options.autoRendered = autoRendered
        return PushHubClient(
            url: HubURL("ws://127.0.0.1:1/v1/connect")!, credentials: .device("d-1"), transport: transport,
            options: options)
    }

    static func snapshot(_ tree: String, version: Int, screen: String = "home") throws -> String {
        let hash = ScreenHash.of(try JSONReader.parse(tree))
        return #"{"type":"snapshot","screen":"\#(screen)","version":\#(version),"hash":"\#(hash)","tree":\#(tree)}"#
    }

    /// The `render_error` a `CarouselFailed` thrown for `tree` at `version` of `home` sends.
    static func carouselFailed(_ tree: String, version: Int) throws -> JSONValue {
        let hash = ScreenHash.of(try JSONReader.parse(tree))
        return try JSONReader.parse(
            #"{"type":"render_error","screen":"home","version":\#(version),"hash":"\#(hash)","component":"Carousel","message":"slide 2 has no image"}"#
        )
    }

    /// The `rendered` and `render_error` messages sent, in order.
    static func reports(_ transport: ScriptedTransport) -> [JSONValue] {
        transport.sent.filter { ["rendered", "render_error"].contains($0["type"]?.stringValue ?? "") }
    }

    @Test(
        "a tree callback that throws sends render_error for that version and no rendered; the other callbacks still run"
    )
    func throwingCallback() async throws {
        let transport = ScriptedTransport()
        let client = Self.client(transport)
        defer { client.close() }
        let drawn = Mutex<[String]>([])
        client.subscribe("home") { _, meta in
            if meta.version == 3 { throw CarouselFailed() }
            drawn.withLock { $0.append("throwing one v\(meta.version)") }
        }
        client.subscribe("home") { _, meta in drawn.withLock { $0.append("other v\(meta.version)") } }
        await client.flush()
        transport.hubSends(ScriptedTransport.welcome)
        let tree = #"{"title":"Hi"}"#
        transport.hubSends(try Self.snapshot(tree, version: 3))
        await client.flush()
        #expect(Self.reports(transport) == [try Self.carouselFailed(tree, version: 3)])
        #expect(drawn.withLock { $0 } == ["other v3"])
        // The next version draws: rendered, as before.
        let two = try JSONReader.parse(#"{"title":"Hey"}"#)
        transport.hubSends(
            #"{"type":"patch","screen":"home","from":3,"version":4,"hash":"\#(ScreenHash.of(two))","ops":[{"op":"replace","path":"/title","value":"Hey"}]}"#
        )
        await client.flush()
        #expect(
            Self.reports(transport).last == (try JSONReader.parse(#"{"type":"rendered","screen":"home","version":4}"#)))
        #expect(Self.reports(transport).count == 2)
        #expect(drawn.withLock { $0 } == ["other v3", "throwing one v4", "other v4"])
    }

    @Test("a throw reports render_error also without autoRendered; a plain Error has no component")
    func throwingWithoutAutoRendered() async throws {
        enum Broken: Error { case layout }
        let transport = ScriptedTransport()
        let client = Self.client(transport, autoRendered: false)
        defer { client.close() }
        client.subscribe("home") { _, _ in throw Broken.layout }
        await client.flush()
        transport.hubSends(ScriptedTransport.welcome)
        transport.hubSends(try Self.snapshot(#"{"n":1}"#, version: 1))
        await client.flush()
        let reports = Self.reports(transport)
        #expect(reports.count == 1 && reports.first?["type"] == .string("render_error"))
        #expect(reports.first?["component"] == nil && reports.first?["message"] == .string("layout"))
    }

    @Test("renderFailed while not connected is sent after the next welcome, with the held tree's hash")
    func renderFailedOffline() async throws {
        let transport = ScriptedTransport()
        let client = Self.client(transport, autoRendered: false)
        defer { client.close() }
        client.subscribe("home") { _, _ in }
        await client.flush()
        transport.hubSends(ScriptedTransport.welcome)
        let tree = #"{"title":"Hi"}"#
        transport.hubSends(try Self.snapshot(tree, version: 3))
        await client.flush()
        transport.drop()
        client.renderFailed("home", version: 3, error: CarouselFailed())
        await client.flush()
        #expect(Self.reports(transport).isEmpty)
        let reconnected = Recorder()
        #expect(reconnected.wait { transport.opens == 2 })
        await client.flush()
        #expect(Self.reports(transport).isEmpty)  // not before the welcome
        transport.hubSends(ScriptedTransport.welcome)
        await client.flush()
        #expect(Self.reports(transport) == [try Self.carouselFailed(tree, version: 3)])
    }
}
