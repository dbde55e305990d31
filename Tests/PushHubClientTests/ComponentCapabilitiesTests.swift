import Foundation
import Testing

@testable import PushHubClient

/// The `components` option (DESIGN §16): what the hello declares, and what is refused before it
/// could reach the hub. The cases of clients/js/test/component-capabilities.test.js.
@Suite struct ComponentCapabilitiesTests {
    static func hello(_ session: inout ClientSession) -> String {
        let actions = session.opened(token: nil, device: "d-1")
        guard case .send(let message) = actions.first else { return "" }
        return JSONWriter.string(.object(message))
    }

    @Test("the hello carries components; [:] declares none; without the option there is no member")
    func hello() {
        var declared = ClientSession(
            app: AppInfo(platform: "ios", version: "5.3.0"), components: ["Carousel": 2, "text.v-1_x": 1],
            scope: .none)
        #expect(
            Self.hello(&declared)
                == #"{"app":{"platform":"ios","version":"5.3.0"},"components":{"Carousel":2,"text.v-1_x":1},"device":"d-1","heartbeat":true,"protocol":1,"type":"hello"}"#
        )
        var none = ClientSession(app: nil, components: [:], scope: .none)
        #expect(Self.hello(&none) == #"{"components":{},"device":"d-1","heartbeat":true,"protocol":1,"type":"hello"}"#)
        var undeclared = ClientSession(app: nil, scope: .none)
        #expect(Self.hello(&undeclared) == #"{"device":"d-1","heartbeat":true,"protocol":1,"type":"hello"}"#)
    }

    @Test("the edges are declarable: versions 1 and 1000, names of 1 and 100 characters, 1000 names")
    func edges() {
        #expect(ComponentCapabilities.problem(in: ["A": 1, String(repeating: "x", count: 100): 1000]) == nil)
        let many = Dictionary(uniqueKeysWithValues: (0..<1000).map { ("C\($0)", 1) })
        #expect(ComponentCapabilities.problem(in: many) == nil)
        #expect(ComponentCapabilities.problem(in: [:]) == nil)
    }

    @Test(
        "a bad list is named: a version out of 1…1000, a name that is not 1–100 of A–Z a–z 0–9 . _ -, over 1000 names",
        arguments: [
            (["Carousel": 0], "Carousel is 0, not an integer from 1 to 1000"),
            (["Carousel": 1001], "Carousel is 1001, not an integer from 1 to 1000"),
            (["Carousel": -2], "Carousel is -2, not an integer from 1 to 1000"),
            (["": 1], #""" is not a component name (1–100 of A–Z a–z 0–9 . _ -)"#),
            (["has space": 1], #""has space" is not a component name (1–100 of A–Z a–z 0–9 . _ -)"#),
            (["Carrusél": 1], #""Carrusél" is not a component name (1–100 of A–Z a–z 0–9 . _ -)"#),
            ([String(repeating: "x", count: 101): 1], "is not a component name"),
            (Dictionary(uniqueKeysWithValues: (0..<1001).map { ("C\($0)", 1) }), "1001 components, at most 1000"),
        ])
    func refused(_ components: [String: Int], _ says: String) {
        let problem = ComponentCapabilities.problem(in: components)
        #expect(problem?.contains(says) == true, "\(problem ?? "nil")")
    }

    @Test("the client sends its components in every hello, the first and after a reconnect")
    func everyHello() async {
        let transport = ScriptedTransport()
        var options = PushHubClient.Options()
        options.random = { 0 }  // reconnect at once
        options.components = ["Carousel": 2, "Text": 1]
        let client = PushHubClient(
            url: HubURL("ws://127.0.0.1:1/v1/connect")!, credentials: .device("d-1"), transport: transport,
            options: options)
        defer { client.close() }
        await client.flush()
        transport.hubSends(ScriptedTransport.welcome)
        await client.flush()
        transport.drop()
        for _ in 0..<200 where transport.opens < 2 { try? await Task.sleep(for: .milliseconds(10)) }
        await client.flush()
        let hellos = transport.sent.filter { $0["type"] == .string("hello") }
        #expect(hellos.count == 2)
        #expect(hellos.allSatisfy { $0["components"] == .object(["Carousel": .number(2), "Text": .number(1)]) })
    }

    @Test("fetchScreen is made as the same build: ?components=Carousel:2,Text:1 ('' for [:]), none without the option")
    func fetchSendsComponents() async {
        var paths: [String] = []
        for components in [["Text": 1, "Carousel": 2], [:], nil] as [[String: Int]?] {
            let transport = CannedTransport(answer: HTTPAnswer(status: 503, headers: HeaderFields(), body: []))
            var options = PushHubClient.Options()
            options.components = components
            let client = PushHubClient(
                url: HubURL("ws://127.0.0.1:1/v1/connect")!, credentials: .device("d-1"), transport: transport,
                options: options)
            _ = try? await client.fetchScreen("home")
            client.close()
            paths += transport.requested.withLock { $0 }
        }
        #expect(
            paths == [
                "/v1/screens/home?components=Carousel%3A2%2CText%3A1&device=d-1",
                "/v1/screens/home?components=&device=d-1",
                "/v1/screens/home?device=d-1",
            ])
    }

    @Test(
        "against a hub: a client that renders Text alone gets the Carousel's Text fallback, over the socket and by fetch, and is counted"
    )
    func againstAHub() async throws {
        let fixture = try HubFixture()
        defer { fixture.stop() }
        let carousel = #"{"versions":{"1":{"schema":{"type":"object","required":["items"]}}}}"#
        #expect(try fixture.admin("PUT", "/v1/components/Carousel", carousel).status == 200)
        #expect(try fixture.admin("PUT", "/v1/components/Text", #"{"versions":{"1":{}}}"#).status == 200)
        let fallback = try JSONReader.parse(#"{"id":"hero","type":"Text","text":"Swipe through our offers"}"#)
        let published = try fixture.publish(
            "home",
            .object([
                "type": .string("screen"),
                "children": .array([
                    .object([
                        "id": .string("hero"), "type": .string("Carousel"), "items": .array([.string("a")]),
                        "fallback": fallback,
                    ])
                ]),
            ]))
        var options = ClientAgainstHubTests.options()
        options.components = ["Text": 1]
        let client = PushHubClient(
            url: fixture.url, credentials: .token(fixture.token(user: "u-text")), options: options)
        defer { client.close() }
        let recorder = Recorder()
        recorder.attach(client, screen: "home")
        #expect(recorder.wait { recorder.lastTree != nil })
        let (tree, meta) = try #require(recorder.lastTree)
        #expect(tree["children"] == .array([fallback]))
        #expect(meta.hash != published.hash)  // not the tree a client that renders everything gets
        // The fetch is made as the same build: the hub finds the tree it holds current.
        let fetched = try await client.fetchScreen("home")
        #expect(fetched.hash == meta.hash && fetched.status == 304)
        let counts = try fixture.admin("GET", "/v1/components").json
        #expect(counts["clients"] == .number(1))
        let clients = (counts["components"]?.arrayValue ?? []).map { component in
            "\(component["name"]?.stringValue ?? ""):\(component["versions"]?.arrayValue?.first?["clients"]?.intValue ?? -1)"
        }
        #expect(clients == ["Carousel:0", "Text:1"])
    }

    @Test("a bad list stops the program at PushHubClient.init (a programming error, as the JavaScript client throws)")
    func badListStops() async {
        await #expect(processExitsWith: .failure) {
            var options = PushHubClient.Options()
            options.components = ["Carousel": 0]
            _ = PushHubClient(
                url: HubURL("ws://127.0.0.1:1/v1/connect")!, credentials: .device("d-1"),
                transport: ScriptedTransport(), options: options)
        }
    }
}
