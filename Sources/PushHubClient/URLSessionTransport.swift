// Left out of the Linux dist build (PUSHHUB_NO_URLSESSION, Package.swift): hubctl uses the socket
// transport there, and linking this one statically would bring libcurl.
#if !PUSHHUB_NO_URLSESSION
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `ClientTransport` on URLSession, what iOS and macOS apps use (the default there): WebSockets
/// through `URLSessionWebSocketTask`, `fetchScreen` through a data task. URLSession brings App
/// Transport Security, the system's proxies and trust store, and answers the hub's pings itself.
/// A dead link (a NAT mapping dropped while the app slept) is caught by the client, not by the
/// task: after two heartbeats of silence `PushHubClient` abandons the connection (`LinkLiveness`).
///
/// On Linux, Foundation's URLSession has no WebSockets (its libcurl lacks them): opening fails
/// with a close 1006 naming why; `fetchScreen` works.
public struct URLSessionTransport: ClientTransport {
    public var session: URLSession
    /// The largest message the task accepts (URLSession's own default is 1 MiB). The hub's
    /// snapshots carry whole screens, which the admin API takes up to 4 MiB.
    public var maximumMessageSize: Int

    public init(session: URLSession = .shared, maximumMessageSize: Int = 16 << 20) {
        self.session = session
        self.maximumMessageSize = maximumMessageSize
    }

    public func open(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
        -> any TransportConnection
    {
        guard let url = URL(string: request.url.description) else {
            events(.closed(code: 1006, reason: "URLSession takes no URL \(request.url)"))
            return UnopenedConnection()
        }
        var urlRequest = URLRequest(url: url)
        for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
        if let subprotocol = request.subprotocol {
            urlRequest.addValue(subprotocol, forHTTPHeaderField: "Sec-WebSocket-Protocol")
        }
        let task = session.webSocketTask(with: urlRequest)
        task.maximumMessageSize = maximumMessageSize
        let connection = URLSessionConnection(task: task, events: events)
        connection.start()
        return connection
    }

    public func get(
        _ request: TransportRequest, completion: @escaping @Sendable (Result<HTTPAnswer, TransportError>) -> Void
    ) {
        guard let url = URL(string: request.url.httpDescription) else {
            return completion(.failure(TransportError("URLSession takes no URL \(request.url.httpDescription)")))
        }
        var urlRequest = URLRequest(url: url)
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
/// the connection reports `.opened` at once (a handshake that never completes is a silent link,
/// which the client gives up on); a failed receive ends it with the close code the hub sent (1006
/// when there was none).
///
/// Invariant: `.closed` is reported at most once, and never after `abandon` (`ended` flips once).
final class URLSessionConnection: TransportConnection {
    private let task: URLSessionWebSocketTask
    private let events: @Sendable (TransportEvent) -> Void
    private let ended = Locked(false)

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

    /// Whether this call is the one that ends the connection.
    private func endOnce() -> Bool {
        ended.withLock { ended in
            defer { ended = true }
            return !ended
        }
    }

    private func end(code: UInt16, reason: String) {
        guard endOnce() else { return }
        events(.closed(code: code, reason: reason))
    }

    func send(text: String) {
        // A send that failed means the connection did: drop it (the failed receive reports
        // `.closed` 1006). 1006 itself may not be put in a close frame (RFC 6455 §7.4.1).
        task.send(.string(text)) { [task] error in
            if error != nil { task.cancel() }
        }
    }

    func close(code: UInt16, reason: String) {
        task.cancel(
            with: URLSessionWebSocketTask.CloseCode(rawValue: Int(code)) ?? .normalClosure, reason: Data(reason.utf8))
    }

    /// The client found the link dead (no message for two heartbeats): drop the task, no handshake.
    func abandon() {
        _ = endOnce()
        task.cancel()
    }
}

/// A connection URLSession could not start (its `.closed` was reported at `open`).
private struct UnopenedConnection: TransportConnection {
    func send(text: String) {}
    func close(code: UInt16, reason: String) {}
}
#endif
