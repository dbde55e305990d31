// The example docs/clients.md shows: PushHubClient on URLSessionWebSocketTask, as an iOS app
// plugs it in (App Transport Security wants wss://, which URLSession speaks). It is compiled and
// run against a real hub by URLSessionTransportTests, here on Linux's FoundationNetworking.
import Foundation
import PushHubClient
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `ClientTransport` on URLSession: WebSockets through `URLSessionWebSocketTask`, `fetchScreen`
/// through a data task. URLSession answers the hub's pings itself.
struct URLSessionTransport: ClientTransport {
    var session: URLSession = .shared

    func open(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
        -> any TransportConnection
    {
        var urlRequest = URLRequest(url: URL(string: request.url.description)!)
        for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
        if let subprotocol = request.subprotocol {
            urlRequest.addValue(subprotocol, forHTTPHeaderField: "Sec-WebSocket-Protocol")
        }
        let connection = URLSessionConnection(task: session.webSocketTask(with: urlRequest), events: events)
        connection.start()
        return connection
    }

    func get(_ request: TransportRequest, completion: @escaping @Sendable (Result<HTTPAnswer, TransportError>) -> Void) {
        var urlRequest = URLRequest(url: URL(string: request.url.httpDescription)!)
        for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
        session.dataTask(with: urlRequest) { data, response, error in
            guard let response = response as? HTTPURLResponse else {
                return completion(.failure(TransportError("\(error.map { "\($0)" } ?? "no answer")")))
            }
            var headers = HeaderFields()
            for case (let name as String, let value as String) in response.allHeaderFields {
                headers.append(name: name, value: value)
            }
            completion(.success(HTTPAnswer(status: response.statusCode, headers: headers, body: Array(data ?? Data()))))
        }.resume()
    }
}

/// One `URLSessionWebSocketTask`. The task queues sends made before its handshake completes, so
/// the connection reports `.opened` at once; a failed receive ends it with the close code the hub
/// sent (1006 when there was none), reported once.
final class URLSessionConnection: TransportConnection {
    private let task: URLSessionWebSocketTask
    private let events: @Sendable (TransportEvent) -> Void
    private let ended = Atomic(false)

    init(task: URLSessionWebSocketTask, events: @escaping @Sendable (TransportEvent) -> Void) {
        self.task = task
        self.events = events
    }

    func start() {
        task.resume()
        events(.opened)
        receive()
    }

    private func receive() {
        task.receive { [self] result in
            switch result {
            case .success(.string(let text)):
                events(.text(text))
                receive()
            case .success:
                receive()  // protocol v1 is text only
            case .failure(let error):
                let code = task.closeCode == .invalid ? 1006 : UInt16(task.closeCode.rawValue)
                let reason = task.closeReason.map { String(decoding: $0, as: UTF8.self) } ?? "\(error)"
                end(code: code, reason: reason)
            }
        }
    }

    private func end(code: UInt16, reason: String) {
        guard !ended.exchange(true, ordering: .relaxed) else { return }
        events(.closed(code: code, reason: reason))
    }

    func send(text: String) {
        task.send(.string(text)) { [self] error in
            if error != nil { task.cancel(with: .abnormalClosure, reason: nil) }
        }
    }

    func close(code: UInt16, reason: String) {
        task.cancel(with: URLSessionWebSocketTask.CloseCode(rawValue: Int(code)) ?? .normalClosure, reason: Data(reason.utf8))
    }

    /// The client found the link dead (no message for two heartbeats): drop the task, no handshake.
    func abandon() {
        ended.store(true, ordering: .relaxed)
        task.cancel()
    }
}
