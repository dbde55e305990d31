import CLinux
import Glibc

/// A connection's byte stream, whatever travels on it: the socket (through TLS when the listener
/// has it), what waits to be written, where the stream stands in closing, and the owning loop's
/// bookkeeping for it (epoll interest, the flush list, the timer heap). `WebSocketConnection` and
/// `AdminConnection` each hold one; the behaviour on top of it is written once, in
/// `LoopConnection+Stream.swift`.
///
/// Invariants: `socket` is open until the loop reaps the connection; `closeDeadline` is set once,
/// when the connection starts closing, and never cleared; `registeredInterest` is what epoll
/// reports for the socket now; only the owning loop's thread touches it.
struct ByteStream {
    /// What epoll reports for a socket: readable unless reading is paused, writable when asked.
    struct Interest: Equatable {
        var readable: Bool
        var writable: Bool
    }

    // Declared widest first, each 9-byte optional followed by the small fields that fill its
    // padding, so that the connections holding a stream stay small (memory per connection, DESIGN §9).
    let token: UInt64
    var outbound = OutboundQueue()
    /// TLS over `socket` when the listener has it (`--tls-cert`, `--admin-tls-cert`).
    let tls: TLSStream?
    /// When the peer last sent bytes (the loop's tick time).
    var lastReadAt: UInt64
    /// Set when the connection starts closing: it writes what is queued, half-closes, and waits
    /// for the peer's end of stream until then, so that its last bytes are not lost to a reset.
    var closeDeadline: UInt64?
    var isFlushPending = false
    var isCloseRequested = false
    var isReadPaused = false
    private(set) var socket: Socket
    /// The loop's timer for this connection (`DeadlineHeap`): when, and where in the heap.
    var scheduledDeadline: UInt64?
    private(set) var hasShutDownWrite = false
    /// What epoll reports for the socket now (registration starts readable only).
    var registeredInterest = Interest(readable: true, writable: false)
    var timerIndex: Int32 = -1

    init(token: UInt64, socket: Socket, tls: TLSStream?, now: UInt64) {
        self.token = token
        self.socket = socket
        self.tls = tls
        lastReadAt = now
    }

    var isClosing: Bool { closeDeadline != nil }

    /// Writes `bytes` at once, through TLS when there is one (a fan-out's direct write).
    /// `mutating` only so that the call works in place: a non-mutating call on a stream stored in
    /// a connection copies the stream first (retaining what it holds), once per delivery.
    /// - Returns: how many bytes the socket took; `.wouldBlock` if none.
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        guard let tls else { return try socket.write(bytes) }
        return try tls.write(bytes)
    }

    /// Writes as much of the queue as the socket takes.
    /// - Returns: bytes written; `.wouldBlock` if the socket took nothing.
    mutating func writeQueued() throws(SystemError) -> IOResult<Int> {
        // The queue is being changed while it writes: the socket and TLS are read beforehand.
        let socket = socket
        let tls = tls
        return try outbound.write { iovecs throws(SystemError) in
            guard let tls else { return try socket.writev(iovecs) }
            return try tls.writev(iovecs)
        }
    }

    /// No more writes from us: TLS's close_notify (unless TLS never started), then TCP's FIN.
    mutating func shutdownWrite(closeNotify: Bool = true) {
        if closeNotify { tls?.sendCloseNotify() }
        socket.shutdownWrite()
        hasShutDownWrite = true
    }

    /// Closes the socket; only the loop's reaping calls it.
    mutating func close() {
        socket.close()
    }
}
