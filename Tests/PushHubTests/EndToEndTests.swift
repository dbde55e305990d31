import Foundation
import Testing
import PushHubClient
import WSProtocol

@testable import PushHub

/// An in-process hub on loopback, spoken to by WSProtocol's own client side.
@Suite(.serialized) struct EndToEndTests {
    static func startHub(loops: Int = 2, anonymous: Bool = false) throws -> Hub {
        var config = HubConfig()
        config.allowAnonymous = anonymous
        config.listen = SocketAddress(host: "127.0.0.1", port: 0)
        config.admin = SocketAddress(host: "127.0.0.1", port: 0)
        config.dataDirectory = NSTemporaryDirectory() + "pushhub-tests-\(UUID().uuidString)"
        config.echoPath = "/echo"
        config.loops = loops
        return try Hub(config: config)
    }

    @Test("many clients over several loops each get their own echoes")
    func manyClients() throws {
        let hub = try Self.startHub()
        defer {
            hub.shutdown(drain: .seconds(2))
            hub.join()
        }
        let clients = try (0..<20).map { _ in try WebSocketClient(address: hub.clientAddress, path: "/echo") }
        for (i, client) in clients.enumerated() { try client.sendText("client \(i)") }
        for (i, client) in clients.enumerated() { #expect(try client.receive() == .text("client \(i)")) }
        try clients[0].send(.binary, Array(repeating: 7, count: 100_000), fragmentSize: 4096)
        #expect(try clients[0].receive() == .binary(Array(repeating: 7, count: 100_000)))
        #expect(hub.metrics.webSocketConnections.load(ordering: .relaxed) == 20)
        for client in clients {
            try client.sendClose(.normal)
            #expect(try client.receive() == .close(ClosePayload(code: .normal)))
            #expect(try client.receive() == nil)  // the server closed TCP first
        }
    }

    @Test("permessage-deflate between WSProtocol's client and the hub: agreed, compressed both ways, or declined")
    func compression() throws {
        let hub = try Self.startHub(loops: 1)
        defer {
            hub.shutdown(drain: .seconds(2))
            hub.join()
        }
        let client = try WebSocketClient(address: hub.clientAddress, path: "/echo")
        var expected = DeflateParameters()
        expected.serverNoContextTakeover = true
        expected.clientNoContextTakeover = true
        #expect(client.compression == expected)
        let text = String(repeating: #"{"id":"row","type":"text","text":"a line of a long screen"},"#, count: 1000)
        try client.sendText(text)
        #expect(try client.receive() == .text(text))
        try client.sendText("short")  // under the 256-byte minimum: plain both ways
        #expect(try client.receive() == .text("short"))
        #expect(hub.metrics.compressedConnections.load(ordering: .relaxed) == 1)
        #expect(hub.metrics.compressedMessagesIn.load(ordering: .relaxed) == 1)
        #expect(hub.metrics.compressions.load(ordering: .relaxed) == 1)
        let plain = try WebSocketClient(address: hub.clientAddress, path: "/echo", compresses: false)
        #expect(plain.compression == nil)
        try plain.sendText(text)
        #expect(try plain.receive() == .text(text))
        #expect(hub.metrics.compressedConnections.load(ordering: .relaxed) == 1)
    }

    @Test("shutdown sends 1001 to every client and the loops exit")
    func shutdown() throws {
        let hub = try Self.startHub()
        let client = try WebSocketClient(address: hub.clientAddress, path: "/echo")
        hub.shutdown(drain: .seconds(2))
        #expect(try client.receive() == .close(ClosePayload(code: .goingAway, reason: "hub shutting down")))
        try client.sendClose(.goingAway)
        hub.join()
        #expect(hub.metrics.openConnections.load(ordering: .relaxed) == 0)
    }

    /// Reads messages until one of these types arrives (JSON text messages only).
    static func next(_ types: String..., from client: WebSocketClient) throws -> JSONValue {
        while true {
            guard case .text(let text)? = try client.receive() else { throw NoMessage() }
            let json = try JSONReader.parse(Array(text.utf8))
            if let type = json["type"]?.stringValue, types.contains(type) { return json }
        }
    }

    struct NoMessage: Error {}

    @Test("clients on two loops get every version and sync while the control plane commits them (threads meet only in mailboxes; run under make tsan)")
    func controlPlaneAndLoops() throws {
        let hub = try Self.startHub(anonymous: true)
        defer {
            hub.shutdown(drain: .seconds(2))
            hub.join()
        }
        let token = hub.secrets.adminToken
        func admin(_ method: String, _ path: String, _ body: String) throws -> Int {
            try BlockingHTTP.request(
                hub.adminAddress, method: method, path: path, body: Array(body.utf8), bearer: token
            ).status
        }
        #expect(try admin("PUT", "/v1/screens/home", #"{"n":0}"#) == 200)
        let clients = try (0..<8).map { i in
            let client = try WebSocketClient(address: hub.clientAddress, path: "/v1/connect")
            try client.sendText(#"{"type":"hello","protocol":1,"device":"d-\#(i)"}"#)
            _ = try Self.next("welcome", from: client)
            try client.sendText(#"{"type":"subscribe","screen":"home"}"#)
            #expect(try Self.next("snapshot", from: client)["version"] == .number(1))
            return client
        }
        for n in 1...5 { #expect(try admin("PUT", "/v1/screens/home", #"{"n":\#(n)}"#) == 200) }
        #expect(try admin("POST", "/v1/syncs", #"{"target":{"all":true}}"#) == 200)
        for client in clients {
            for version in 2...6 {
                // A tree this small goes out as a snapshot (smaller than its patch); either way, in order.
                let update = try Self.next("patch", "snapshot", from: client)
                #expect(update["version"] == .number(Double(version)))
            }
            #expect(try Self.next("sync", from: client)["seq"] == .number(1))
        }
        let clientsAnswer = try BlockingHTTP.request(hub.adminAddress, method: "GET", path: "/v1/clients", bearer: token)
        #expect(try JSONReader.parse(clientsAnswer.body)["count"] == .number(8))
    }
}
