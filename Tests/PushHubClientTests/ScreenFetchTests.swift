import Synchronization
import Testing

@testable import PushHubClient

/// `fetchScreen`'s reading of HTTP answers (issue 24 item 6): the hub's JSON errors by their code,
/// anyone else's answer (a proxy's HTML 404, a load balancer's 502) as `http_<status>`.
@Suite struct ScreenFetchTests {
    /// nginx 1.22's own 404 page, as it answers a path it does not proxy.
    static let nginx404 = Array(
        "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n"
            .utf8)

    @Test("the hub's JSON error gives its code and message")
    func hubError() {
        let error = FetchError.answered(
            status: 404, body: Array(#"{"error":{"code":"unknown_screen","message":"no screen named home"}}"#.utf8))
        #expect(error.code == .unknownScreen && error.status == 404 && error.message == "no screen named home")
        let other = FetchError.answered(
            status: 400, body: Array(#"{"error":{"code":"bad_app_version","message":"app_version \"x\""}}"#.utf8))
        #expect(other.code.rawValue == "bad_app_version")
    }

    @Test("a proxy's 404 page or 502 is not the hub's answer: http_404, http_502, never unknown_screen")
    func foreignAnswers() {
        let error = FetchError.answered(status: 404, body: Self.nginx404)
        #expect(error.code == .foreign(status: 404) && error.code.rawValue == "http_404")
        #expect(error.message.hasPrefix("not a PushHub answer (HTTP 404 from a proxy?): <html> <head><title>404"))
        #expect(FetchError.answered(status: 502, body: []).code.rawValue == "http_502")
        // JSON, but not the hub's error shape (an API gateway's): foreign too.
        #expect(FetchError.answered(status: 404, body: Array(#"{"message":"Not Found"}"#.utf8)).code.rawValue == "http_404")
    }

    @Test("fetchScreen through a transport that gets nginx's 404 reports http_404")
    func throughTheClient() async {
        let transport = CannedTransport(answer: HTTPAnswer(status: 404, headers: HeaderFields(), body: Self.nginx404))
        let client = PushHubClient(url: HubURL("ws://push.example.com/v1/connect")!, credentials: .device("d-1"), transport: transport)
        defer { client.close() }
        do {
            _ = try await client.fetchScreen("home")
            Issue.record("a 404 page from a proxy was taken for a screen")
        } catch {
            #expect(error.code.rawValue == "http_404" && error.status == 404, "\(error)")
        }
        #expect(transport.requested.withLock { $0 } == ["/v1/screens/home?device=d-1"])
    }
}

/// A transport whose WebSocket never connects and whose every GET gets `answer`.
final class CannedTransport: ClientTransport {
    let answer: HTTPAnswer
    let requested = Mutex<[String]>([])

    init(answer: HTTPAnswer) { self.answer = answer }

    func open(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> any TransportConnection {
        events(.closed(code: 1006, reason: "no network in this test"))
        return Unconnected()
    }

    func get(_ request: TransportRequest, completion: @escaping @Sendable (Result<HTTPAnswer, TransportError>) -> Void) {
        requested.withLock { $0.append(request.url.path) }
        completion(.success(answer))
    }

    struct Unconnected: TransportConnection {
        func send(text: String) {}
        func close(code: UInt16, reason: String) {}
    }
}
