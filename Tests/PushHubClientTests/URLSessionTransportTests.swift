import Foundation
import Synchronization
import Testing

@testable import PushHubClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `URLSessionTransport` (the default on Apple's platforms) against a real hub. Its WebSocket half
/// needs a URLSession with WebSockets: Apple's always; on Linux, a FoundationNetworking built
/// against a libcurl with WebSockets, which this toolchain's is not — there that test is skipped,
/// the transport's behaviour without WebSockets is checked instead, and its HTTP half runs.
@Suite(.serialized) struct URLSessionTransportTests {
    /// Whether this URLSession can open WebSockets at all (Debian's libcurl answers "unsupported URL").
    static let webSocketsAvailable: Bool = {
        let task = URLSession.shared.webSocketTask(with: URL(string: "ws://127.0.0.1:9/")!)
        let answer = DispatchSemaphore(value: 0)
        let unsupported = Atomic(false)
        task.resume()
        task.receive { result in
            if case .failure(let error) = result, (error as NSError).code == NSURLErrorUnsupportedURL {
                unsupported.store(true, ordering: .relaxed)
            }
            answer.signal()
        }
        _ = answer.wait(timeout: .now() + 5)
        return !unsupported.load(ordering: .relaxed)
    }()

    @Test("URLSessionTransport's HTTP half: fetchScreen 200, then 304")
    func fetch() async throws {
        let fixture = try HubFixture()
        defer { fixture.stop() }
        let published = try fixture.publish("home", ClientAgainstHubTests.screen(#"{"title":"one"}"#))
        let client = PushHubClient(
            url: fixture.url, credentials: .device("d-urlsession"), transport: URLSessionTransport(),
            options: ClientAgainstHubTests.options())
        defer { client.close() }
        let fetched = try await client.fetchScreen("home")
        #expect(fetched.status == 200 && fetched.hash == published.hash)
        let again = try await client.fetchScreen("home")
        #expect(again.status == 304 && again.version == published.version)
    }

    @Test(
        "URLSessionTransport's WebSocket half: subscribe, a patch, a sync acked",
        .enabled(if: webSocketsAvailable, "this URLSession has no WebSockets (Debian's libcurl 7.88)"))
    func webSocket() throws {
        let fixture = try HubFixture()
        defer { fixture.stop() }
        let (client, _) = try fixture.snapshotPatchAndSync(
            transport: URLSessionTransport(), device: "d-urlsession", options: ClientAgainstHubTests.options())
        client.close()
    }

    @Test(
        "URLSessionTransport without WebSockets: .opened, then one .closed 1006 naming why, nothing after",
        .enabled(if: !webSocketsAvailable, "this URLSession has WebSockets"))
    func withoutWebSockets() throws {
        let fixture = try HubFixture()
        defer { fixture.stop() }
        let events = Locked<[TransportEvent]>([])
        let closed = DispatchSemaphore(value: 0)
        let connection = URLSessionTransport().open(TransportRequest(url: fixture.url)) { event in
            events.withLock { $0.append(event) }
            if case .closed = event { closed.signal() }
        }
        #expect(closed.wait(timeout: .now() + 10) == .success)
        connection.send(text: "{}")
        connection.close(code: 1000, reason: "")
        Thread.sleep(forTimeInterval: 0.2)
        let seen = events.withLock { $0 }
        #expect(seen.count == 2 && seen.first == .opened, "\(seen)")
        guard case .closed(let code, let reason) = seen.last else { return }
        #expect(code == 1006 && reason.contains("WebSockets"), "\(reason)")
    }
}
