/// One connection the hub makes to a server, up to the bytes: what `HTTP2Link` (APNs, FCM:
/// DESIGN §17) and `HTTP1Client`'s connections (JWKS, webhooks: §18) share. The host is looked
/// up off the loop (`AddressLookup`; an IP literal at once), the TCP connect is non-blocking,
/// TLS (when a context is given) is a client handshake with SNI, the certificate checked for
/// the host, and the context's ALPN protocols offered; reads and writes go through TLS or not,
/// never blocking, with output buffered until the socket takes it. It decides nothing about the
/// protocol above, and keeps no deadline: its owner fails an attempt that takes too long.
///
/// One object per attempt: a reconnect makes a new one, with the next `generation`, which tells
/// its socket from the last one in `LoopWatch` (they may share a descriptor number).
///
/// Invariants: `socket` is open exactly in `.connecting` and `.connected`; `tls` is set only
/// in `.connected` (when a context was given); `lookup` only in `.resolving`; once `.closed`
/// it stays closed and holds nothing; `writtenTotal <= queuedTotal` and their difference is
/// `unwrittenBytes`.
final class OutboundSocket {
    enum Phase: Equatable {
        /// Not started (`start`).
        case initial
        /// The host is being looked up off the loop; `poll` checks again at `pollAt`.
        case resolving(pollAt: UInt64)
        /// TCP connecting: the socket is writable when it is done (`connectEnded`).
        case connecting
        /// TCP is up; TLS, if any, runs inside the reads and writes.
        case connected
        case closed
    }

    /// How a step of connecting went.
    enum Progress: Equatable {
        /// Still under way (resolving or connecting).
        case waiting
        /// TCP is up (and TLS started): bytes may be queued and read.
        case connected
        /// Why it failed; the socket is closed.
        case failed(String)
    }

    enum ReadResult {
        /// Bytes read: a slice of the read buffer, valid until the next `read`; `more` is false
        /// when a read now would most likely find nothing.
        case bytes(ArraySlice<UInt8>, more: Bool)
        case wouldBlock
        /// The server closed the stream (TCP FIN or TLS close_notify).
        case ended
        /// Why reading failed (the certificate's problem when TLS refused it).
        case failed(String)
    }

    enum FlushResult: Equatable {
        /// Everything queued was written.
        case flushed
        case wouldBlock
        /// Why writing failed (the certificate's problem when TLS refused it).
        case failed(String)
    }

    let host: String
    let port: UInt16
    let tlsContext: TLSClientContext?
    let generation: UInt64
    private(set) var phase = Phase.initial

    private var lookup: AddressLookup?
    private var socket: Socket?
    private var tls: TLSStream?
    private var output: [UInt8] = []
    private var outputHead = 0
    /// Octets queued and written since the socket opened.
    private(set) var queuedTotal: UInt64 = 0
    private(set) var writtenTotal: UInt64 = 0
    private var readBuffer: [UInt8]

    /// How often a lookup under way is checked.
    static let lookupPollInterval: UInt64 = 2_000_000

    /// - Parameters:
    ///   - host: a name, an IPv4 address or an IPv6 literal with or without brackets.
    ///   - tls: TLS with this context (nil: cleartext).
    ///   - generation: distinct from the owner's earlier sockets (a count of them).
    init(host: String, port: UInt16, tls: TLSClientContext?, generation: UInt64, readBufferBytes: Int = 64 << 10) {
        self.host = host
        self.port = port
        tlsContext = tls
        self.generation = generation
        readBuffer = [UInt8](repeating: 0, count: readBufferBytes)
    }

    deinit {
        precondition(socket == nil, "an outbound socket is closed before it goes away")
    }

    /// `host:port`, as errors name the server.
    var address: String { "\(host):\(port)" }
    var unwrittenBytes: Int { output.count - outputHead }
    /// Whether the TLS handshake is over (always, without TLS).
    var isHandshakeDone: Bool { tls?.isHandshakeDone ?? (phase == .connected) }
    /// The protocol ALPN selected, once the handshake is done.
    var selectedProtocol: String? { tls?.selectedProtocol }
    /// Why TLS refused the server's certificate, if it did.
    var certificateProblem: String? { tls?.certificateProblem }

    // MARK: - Connecting

    /// Looks the host up (off the loop unless it is an IP literal) and connects.
    func start(now: UInt64) -> Progress {
        precondition(phase == .initial, "an outbound socket starts once")
        let address = SocketAddress(host: host, port: port)
        let lookup = AddressLookup(address)
        // A literal is resolved in `init`. A name waits for `poll` even when its thread was
        // quicker than this line: the phase after `start` does not depend on a race.
        if address.isIPLiteral, let result = lookup.result { return connect(to: result) }
        self.lookup = lookup
        phase = .resolving(pollAt: now + Self.lookupPollInterval)
        return .waiting
    }

    /// While resolving: connects once the address came.
    func poll(now: UInt64) -> Progress {
        guard case .resolving = phase else { return phase == .closed ? .failed("closed") : .waiting }
        guard let result = lookup?.result else {
            phase = .resolving(pollAt: now + Self.lookupPollInterval)
            return .waiting
        }
        lookup = nil
        return connect(to: result)
    }

    /// While connecting, once the socket is writable (or hung up): how the connect ended.
    func connectEnded() -> Progress {
        guard phase == .connecting, let socket else { return .waiting }
        if let error = socket.connectResult() { return fail("cannot connect to \(address): \(error)") }
        return startTLS()
    }

    private func connect(to resolved: Result<ResolvedAddress, SystemError>) -> Progress {
        do throws(SystemError) {
            let (socket, connected) = try Socket.connecting(to: try resolved.get())
            self.socket = socket
            phase = .connecting
            return connected ? startTLS() : .waiting
        } catch {
            return fail("cannot connect to \(address): \(error)")
        }
    }

    /// TCP is up: the TLS client side begins (its handshake runs in the first reads and writes).
    private func startTLS() -> Progress {
        guard let socket else { return .failed("closed") }
        if let tlsContext {
            do {
                tls = try TLSStream(client: tlsContext, fd: socket.fd, serverName: host)
            } catch {
                return fail("TLS to \(address): \(error)")
            }
        }
        phase = .connected
        return .connected
    }

    private func fail(_ reason: String) -> Progress {
        close()
        return .failed(reason)
    }

    // MARK: - Reading and writing

    /// What epoll is to report for this socket now (nil: no descriptor yet, or closed).
    var watch: LoopWatch? {
        guard let socket else { return nil }
        switch phase {
        case .connecting: return LoopWatch(fd: socket.fd, socket: generation, writable: true)
        case .connected:
            let wantsWrite = outputHead < output.count && tls?.writeWaitsForReadable != true
            return LoopWatch(
                fd: socket.fd, socket: generation, writable: wantsWrite || tls?.readWaitsForWritable == true)
        case .initial, .resolving, .closed: return nil
        }
    }

    /// Whether a readiness report calls for a read (TLS may wait for writability to read).
    func shouldRead(readable: Bool, writable: Bool, hangup: Bool) -> Bool {
        readable || hangup || (writable && tls?.readWaitsForWritable == true)
    }

    /// Whether a readiness report calls for a flush (TLS may wait for readability to write).
    func shouldFlush(readable: Bool, writable: Bool) -> Bool {
        writable || (readable && tls?.writeWaitsForReadable == true)
    }

    /// Reads once, through TLS if any.
    func read() -> ReadResult {
        guard let socket, phase == .connected else { return .ended }
        let result = readBuffer.withUnsafeMutableBytes { buffer in
            Result { () throws(SystemError) in
                if let tls { return try tls.read(into: buffer) }
                return try socket.read(into: buffer)
            }
        }
        switch result {
        case .failure(let error): return .failed(failure(error))
        case .success(.wouldBlock): return .wouldBlock
        case .success(.processed(0)): return .ended
        case .success(.processed(let count)):
            let more = count == readBuffer.count || tls?.hasBufferedInput == true
            return .bytes(readBuffer[0..<count], more: more)
        }
    }

    /// Queues `bytes` to be written by `flush`.
    func enqueue(_ bytes: some Collection<UInt8>) {
        output.append(contentsOf: bytes)
        queuedTotal += UInt64(bytes.count)
    }

    /// Writes what waits, as far as the socket takes it.
    func flush() -> FlushResult {
        guard let socket, phase == .connected else { return .wouldBlock }
        while outputHead < output.count {
            let result = output[outputHead...].withUnsafeBytes { bytes in
                Result { () throws(SystemError) in
                    if let tls { return try tls.write(bytes) }
                    return try socket.write(bytes)
                }
            }
            switch result {
            case .success(.processed(let count)):
                outputHead += count
                writtenTotal += UInt64(count)
            case .success(.wouldBlock):
                return .wouldBlock
            case .failure(let error):
                return .failed(failure(error))
            }
        }
        output.removeAll(keepingCapacity: output.capacity <= 1 << 20)
        outputHead = 0
        return .flushed
    }

    /// An I/O error, or the certificate's problem when TLS refused it.
    private func failure(_ error: SystemError) -> String {
        guard let problem = tls?.certificateProblem else { return "\(error)" }
        return "the certificate of \(address) is not trusted (\(problem))"
    }

    /// Sends TLS close_notify (best effort) and closes the socket; drops what was not written.
    func close() {
        tls?.sendCloseNotify()
        tls = nil
        lookup = nil
        if var socket {
            socket.close()
            self.socket = nil
        }
        output = []
        outputHead = 0
        phase = .closed
    }
}

@available(*, unavailable)
extension OutboundSocket: Sendable {}
