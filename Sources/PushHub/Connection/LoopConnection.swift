/// One accepted socket as its `EventLoop` holds it, whatever the connection speaks. The loop
/// reads, flushes and times every connection through the byte-stream machinery this protocol's
/// extension writes once (`LoopConnection+Stream.swift`); a conforming type adds only its
/// protocol, through the requirements below, and says how it is reaped.
///
/// Two types conform, one per listener: `WebSocketConnection` (the client listener: the
/// upgrade, then WebSocket frames) and `AdminConnection` (the admin listener: HTTP/1.1 requests
/// for the control plane). Each is a final class holding its `ByteStream` inline, so protocol
/// and stream share one object (memory per connection, DESIGN §9).
///
/// Lifecycle: open (the conforming type's own states) → closing (`stream.closeDeadline` set by
/// `closeAfterFlush`: write what is queued, half-close, wait for the peer's end of stream) →
/// reaped by the loop at the end of a tick (`requestClose`), never in the middle of one.
/// Invariants: the socket is open until `reap()`; `received` is not called once the stream is
/// closing; only the owning loop's thread touches a connection.
protocol LoopConnection: HasToken, HasDeadline {
    /// The listener that accepts this kind (which TLS context it gets, whether the descriptor
    /// ceiling for clients applies).
    static var listenerKind: ListenerKind { get }

    init(token: UInt64, socket: Socket, loop: EventLoop<Self>, tls: TLSStream?)

    /// The owning loop, which holds the connection until it reaps it, so it always outlives it.
    var loop: EventLoop<Self> { get }
    var stream: ByteStream { get set }

    /// Bytes arrived while the stream is open (not closing); valid only during the call (they
    /// are the loop's read buffer).
    func received(_ bytes: UnsafeMutableRawBufferPointer)

    /// The stream starts closing (`closeAfterFlush`), once: nothing more is read for the protocol.
    func closingStarted()

    /// A flush wrote what the socket took and did not close the connection; `stream.outbound`
    /// holds what is left. Called before the loop's epoll interest is updated.
    func flushed()

    /// The protocol's next deadline while the stream is open, if any.
    var openDeadline: UInt64? { get }

    /// A timer fired while the stream is open (possibly early: check the deadline).
    func openTimerFired(now: UInt64)

    /// The hub shuts down: close the protocol's way (WebSocket: a 1001 close frame), or at once.
    func shutDown()

    /// The loop closes the connection (end of tick): let go of what it holds outside itself,
    /// then `stream.close()`.
    func reap()
}

extension LoopConnection {
    var token: UInt64 { stream.token }

    var scheduledDeadline: UInt64? {
        get { stream.scheduledDeadline }
        set { stream.scheduledDeadline = newValue }
    }

    var timerIndex: Int32 {
        get { stream.timerIndex }
        set { stream.timerIndex = newValue }
    }

    var isCloseRequested: Bool { stream.isCloseRequested }
}
