import Foundation
import Synchronization

@testable import PushHubClient

/// A transport the test plays the hub through: it records what the client sends and delivers
/// what the test says, for protocol parts a running hub does not speak yet (or to pin an
/// exact message sequence). One connection at a time; `open` reports `.opened` at once.
final class ScriptedTransport: ClientTransport {
    private struct State {
        var sent: [String] = []
        var events: (@Sendable (TransportEvent) -> Void)?
        var opens = 0
    }

    private let state = Mutex(State())

    final class Connection: TransportConnection {
        let transport: ScriptedTransport
        init(_ transport: ScriptedTransport) { self.transport = transport }
        func send(text: String) { transport.state.withLock { $0.sent.append(text) } }
        func close(code: UInt16, reason: String) { transport.drop(code: code, reason: reason) }
    }

    func open(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
        -> any TransportConnection
    {
        state.withLock {
            $0.events = events
            $0.opens += 1
        }
        events(.opened)
        return Connection(self)
    }

    func get(_ request: TransportRequest, completion: @escaping @Sendable (Result<HTTPAnswer, TransportError>) -> Void)
    {
        completion(.failure(TransportError("no HTTP in a scripted transport")))
    }

    /// The hub sends `text` on the open connection.
    func hubSends(_ text: String) { state.withLock { $0.events }?(.text(text)) }

    /// The connection drops (the client will reconnect through `open` after its backoff).
    func drop(code: UInt16 = 1006, reason: String = "") {
        let events = state.withLock { state in
            defer { state.events = nil }
            return state.events
        }
        events?(.closed(code: code, reason: reason))
    }

    var sent: [JSONValue] { state.withLock { $0.sent }.compactMap { try? JSONReader.parse($0) } }
    var opens: Int { state.withLock { $0.opens } }

    /// The types of the messages sent, with a track's event (`track:purchase`).
    var sentTypes: [String] {
        sent.map { message in
            let type = message["type"]?.stringValue ?? ""
            return type == "track" ? "track:" + (message["event"]?.stringValue ?? "") : type
        }
    }

    static let welcome = #"{"type":"welcome","session":"s-1","user":null,"heartbeat_s":25,"sync_seq":0,"epoch":"e-1"}"#
}
