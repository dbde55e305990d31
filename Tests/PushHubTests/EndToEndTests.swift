import Foundation
import Testing
import WSProtocol

@testable import PushHub

/// An in-process hub on loopback, spoken to by WSProtocol's own client side.
@Suite(.serialized) struct EndToEndTests {
    static func startHub(loops: Int = 2) throws -> Hub {
        var config = HubConfig()
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
}
