// Linux only, like the rest of SocketTransport/: Apple's platforms use URLSessionTransport.
#if PUSHHUB_SOCKET_TRANSPORT
    import Foundation
    import Sockets
    import WSProtocol

    /// The `ClientTransport` of Linux: blocking sockets over WSProtocol's client side, one reader
    /// thread per connection; `wss://` and `https://` through OpenSSL (`TLSChannel`), trusting
    /// `trust` (the system's CAs by default).
    ///
    /// A connection that receives nothing for `readTimeout` is dropped (the hub pings every
    /// `heartbeat_s`, 25 s by default, so silence means the path is dead); `PushHubClient` gives a
    /// connection up sooner, after 2 × heartbeat_s + 2 s without a message (`LinkLiveness`).
    public struct SocketTransport: ClientTransport {
        public var connectTimeout: Duration
        public var readTimeout: Duration
        /// Whom `wss://` and `https://` trust.
        public var trust: TLSTrust

        public init(
            connectTimeout: Duration = .seconds(10), readTimeout: Duration = .seconds(75), trust: TLSTrust = .system
        ) {
            self.connectTimeout = connectTimeout
            self.readTimeout = readTimeout
            self.trust = trust
        }

        public func open(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
            -> any TransportConnection
        {
            let connection = SocketConnection()
            let (connectTimeout, readTimeout, tls) = (connectTimeout, readTimeout, request.url.isSecure ? trust : nil)
            Thread.detachNewThread {
                connection.run(
                    request, connectTimeout: connectTimeout, readTimeout: readTimeout, tls: tls, events: events)
            }
            return connection
        }

        public func get(
            _ request: TransportRequest, completion: @escaping @Sendable (Result<HTTPAnswer, TransportError>) -> Void
        ) {
            let (timeout, tls) = (connectTimeout, request.url.isSecure ? trust : nil)
            Thread.detachNewThread {
                do {
                    let answer = try BlockingHTTP.request(
                        SocketAddress(host: request.url.host, port: request.url.port), method: "GET",
                        path: request.url.path, headers: request.headers, timeout: timeout, tls: tls)
                    completion(.success(HTTPAnswer(status: answer.status, headers: answer.headers, body: answer.body)))
                } catch {
                    completion(.failure(TransportError("GET \(request.url.httpDescription): \(error)")))
                }
            }
        }
    }

    /// One socket connection. The reader thread owns the `WebSocketClient`'s reading side; sends,
    /// pongs and the close frame are written under `writer`, so frames never interleave.
    ///
    /// Invariant (why `@unchecked Sendable` holds): `client`, `closing` and `closed` are read and
    /// written only under `writer`; `client` is set once, before `.opened`. `WebSocketClient.send`
    /// touches only its socket (never the reader's buffers that `receive` mutates on the reader
    /// thread), and every send holds `writer`. This lock is the client tool's, never the hub's.
    final class SocketConnection: TransportConnection, @unchecked Sendable {
        private let writer = NSLock()
        private var client: WebSocketClient?
        private var closing = false
        private var closed = false

        func run(
            _ request: TransportRequest, connectTimeout: Duration, readTimeout: Duration, tls: TLSTrust?,
            events: @Sendable (TransportEvent) -> Void
        ) {
            let client: WebSocketClient
            do {
                client = try WebSocketClient(
                    address: SocketAddress(host: request.url.host, port: request.url.port), path: request.url.path,
                    subprotocols: request.subprotocol.map { [$0] } ?? [], headers: request.headers, limits: .echo,
                    timeout: connectTimeout, tls: tls)
                client.channel.setTimeout(readTimeout)
            } catch {
                return events(.closed(code: 1006, reason: "cannot connect to \(request.url): \(error)"))
            }
            let abandoned = writer.withLock {
                self.client = client
                return closing
            }
            if abandoned {
                client.channel.shutdown()
                return events(.closed(code: 1000, reason: "closed before it opened"))
            }
            events(.opened)
            let (code, reason) = readUntilClosed(client, events: events)
            writer.withLock { closed = true }
            events(.closed(code: code, reason: reason))
        }

        private func readUntilClosed(_ client: WebSocketClient, events: @Sendable (TransportEvent) -> Void) -> (
            UInt16, String
        ) {
            while true {
                let message: WebSocketClient.Message?
                do {
                    message = try client.receive()
                } catch {
                    return (1006, "\(error)")
                }
                switch message {
                case nil: return (1006, "the connection ended without a close frame")
                case .text(let text)?: events(.text(text))
                case .binary?: continue  // protocol v1 is text only
                case .ping(let payload)?: write { try $0.send(.pong, payload) }
                case .pong?: continue
                case .close(let close)?:
                    let code = close.code?.rawValue ?? 1005
                    write { client in
                        try client.sendClose(close.code ?? .normal)
                    }
                    client.waitUntilClosed()
                    return (code, close.reason)
                }
            }
        }

        func send(text: String) { write { try $0.sendText(text) } }

        /// Ends both directions of the socket now: no close frame, no wait; the reader thread sees the
        /// end of stream and reports `.closed`, which the client ignores.
        func abandon() {
            writer.withLock { closing = true }
            write { $0.channel.shutdown() }
        }

        func close(code: UInt16, reason: String) {
            let opened = writer.withLock {
                closing = true
                return client != nil
            }
            guard opened else { return }
            write { try $0.sendClose(CloseCode(rawValue: code), reason: reason) }
            // The hub answers the close frame and closes TCP; if it does not within 2 s, end the read.
            DispatchQueue.global().asyncAfter(deadline: .now() + 2) { self.write { $0.channel.shutdown() } }
        }

        /// Writes under the lock; a failed write ends the connection (the reader sees it).
        private func write(_ body: (WebSocketClient) throws -> Void) {
            writer.withLock {
                guard let client, !closed else { return }
                do {
                    try body(client)
                } catch {
                    client.channel.shutdown()
                }
            }
        }
    }
#endif
