import Portable

/// What `PushHubClient` needs from the network, behind a small protocol so that each platform
/// plugs in its own: `SocketTransport` (Linux and macOS sockets over WSProtocol) ships; an iOS app
/// plugs `URLSessionWebSocketTask` and `URLSession` in (docs/clients.md has the example).
///
/// Contract: for each `open`, `events` is called in order: at most one `.opened`, then `.text`
/// for each text message, then exactly one `.closed` (also when the connection never opened), and
/// nothing after `.closed`. Calls may come from any thread; the client serializes them. The
/// transport answers pings itself.
public protocol ClientTransport: Sendable {
    /// Opens a WebSocket to `request.url` offering `request.subprotocol`.
    func open(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
        -> any TransportConnection

    /// One HTTP GET (for `fetchScreen`); `completion` is called once, from any thread.
    func get(_ request: TransportRequest, completion: @escaping @Sendable (Result<HTTPAnswer, TransportError>) -> Void)
}

/// One open (or opening) WebSocket.
public protocol TransportConnection: Sendable {
    /// Sends one text message; dropped after the connection closed.
    func send(text: String)
    /// Starts the closing handshake; `.closed` follows.
    func close(code: UInt16, reason: String)
    /// Stops using the connection at once, without a closing handshake (the client found the link
    /// dead: a handshake would wait on it). Whatever the transport reports afterwards is ignored.
    /// The default starts the closing handshake (`close(code: 1001, …)`); a transport that can drop
    /// the connection outright should.
    func abandon()
}

extension TransportConnection {
    public func abandon() { close(code: 1001, reason: "the link is dead") }
}

/// Where to connect and which headers to send (`Authorization` for a token).
public struct TransportRequest: Sendable, Equatable {
    public var url: HubURL
    public var subprotocol: String?
    public var headers: HeaderFields

    public init(url: HubURL, subprotocol: String? = nil, headers: HeaderFields = HeaderFields()) {
        self.url = url
        self.subprotocol = subprotocol
        self.headers = headers
    }
}

public enum TransportEvent: Sendable, Equatable {
    case opened
    case text(String)
    /// The connection ended: the close code the peer sent (1006 when the connection dropped or
    /// never opened) and the reason.
    case closed(code: UInt16, reason: String)
}

/// An HTTP answer: status, headers (looked up case-insensitively), body.
public struct HTTPAnswer: Sendable, Equatable {
    public var status: Int
    public var headers: HeaderFields
    public var body: [UInt8]

    public init(status: Int, headers: HeaderFields, body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// The network failed (no answer at all): what was tried and why.
public struct TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}
