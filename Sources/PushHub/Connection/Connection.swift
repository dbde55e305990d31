import Glibc
import WSProtocol

/// One accepted TCP connection on a loop: transport only. It owns the socket, the outbound queue
/// and the protocol state (HTTP head, WebSocket frames, the close handshake, timers, watermarks),
/// and hands what arrives to its loop's `Shard` (client messages, for the `Session`) or the
/// `ControlPlane` (admin requests).
///
/// Lifecycle: `readingHead` → (`readingBody` → `awaitingAnswer` →) `webSocket` or an HTTP answer → `closing` →
/// reaped by the loop at the end of a tick (`requestClose`), never in the middle of one.
/// Invariants: the socket is open until `reap()`; `reader` is nil outside `.webSocket`, and on
/// `/v1/connect` also between messages (it is made again for the next bytes, so an idle client
/// carries none); only the owning loop's thread touches a connection.
final class Connection: HasDeadline, HasToken {
    enum Phase: Equatable {
        /// Reading an HTTP request head; answered 408 after the deadline.
        case readingHead(deadline: UInt64)
        /// Reading an admin request body (`bodyExpected` bytes); answered 408 after the deadline.
        case readingBody(deadline: UInt64)
        /// An admin request is with the control plane (waiting for its commit or its gather);
        /// reading is paused until the answer is written.
        case awaitingAnswer
        case webSocket
        /// Writing what is queued, then half-closing and waiting for the peer's end of stream
        /// until `deadline`, so that our last bytes are not lost to a reset.
        case closing(deadline: UInt64)
    }

    // Stored properties are declared widest first and the small ones together, so that the
    // object stays small (memory per connection, DESIGN §9): 8-byte fields, then the optionals
    // and enums with a tag byte, each followed by one-byte fields that fill its padding.
    let token: UInt64
    /// The owning loop, which holds this connection until it reaps it, so it always outlives it:
    /// `unowned(unsafe)` spares the reference-count check on every use (several per delivery).
    unowned(unsafe) let loop: EventLoop
    private var lastReadAt: UInt64
    private var lastPingAt: UInt64
    var outbound = OutboundQueue()
    private var http: HTTPExchange? = HTTPExchange()
    /// The frame reader, boxed: a client between messages carries 8 bytes for it, not 200.
    private var reader: ReaderBox?
    /// The v1 session of a `/v1/connect` connection (nil on other endpoints and before the 101).
    var session: Session?
    private(set) var socket: Socket
    /// TLS over `socket` when the listener has it (`--tls-cert`, `--admin-tls-cert`).
    private let tls: TLSStream?
    private(set) var phase: Phase
    let kind: ListenerKind
    private(set) var endpoint: Endpoint?
    /// `/v1/connect` messages and pings against `config.clientMessageRate` (its flag byte packs
    /// with the flags below).
    private var messageRate = MessageRateLimit.Bucket()
    /// The LZ77 window the hub deflates with for this client (9...15), or 0 without
    /// permessage-deflate. Everything else about compression is the loop's (`FrameCompression`).
    private var deflateWindowBits: UInt8 = 0
    var isFlushPending = false
    var isCloseRequested = false
    var isReadPaused = false
    var hasShutDownWrite = false
    /// The session asked for `heartbeat` messages: they go with every ping, and pings go every
    /// ping interval whatever the client sends (DESIGN §3; docs/protocol.md "Heartbeats").
    var sendsHeartbeats = false
    /// Set after the 101: once it is written, the outbound buffer is freed, so that an idle
    /// connection holds no buffer.
    private var releaseOutboundWhenFlushed = false
    private var closeHandshake = CloseHandshake()
    /// True from the 101 until the connection starts closing; counted in the gauge meanwhile.
    private(set) var isWebSocket = false
    /// What epoll reports for this socket now (registration starts readable only).
    var registeredInterest = Interest(readable: true, writable: false)
    /// The loop's timer for this connection (`DeadlineHeap`): when, and where in the heap.
    var scheduledDeadline: UInt64?
    var timerIndex: Int32 = -1

    /// HTTP request state, boxed: a WebSocket connection drops it at the upgrade, so idle
    /// connections do not carry it.
    final class HTTPExchange {
        var parser = RequestParser()
        var pendingRequest: RequestHead?
        var body: [UInt8] = []
        var bodyExpected = 0
        /// Bytes of the next (pipelined) request that arrived while an answer was awaited.
        var leftover: [UInt8] = []
    }

    final class ReaderBox {
        var reader: MessageReader
        init(_ reader: MessageReader) { self.reader = reader }
    }

    struct Interest: Equatable {
        var readable: Bool
        var writable: Bool
    }

    /// Whether updates are being held back: the outbound queue is above the high watermark.
    var isCongested: Bool { outbound.pendingBytes > loop.config.outboundHighWatermark }

    init(token: UInt64, socket: Socket, kind: ListenerKind, loop: EventLoop, tls: TLSStream? = nil) {
        self.token = token
        self.socket = socket
        self.tls = tls
        self.kind = kind
        self.loop = loop
        lastReadAt = loop.now
        lastPingAt = loop.now
        phase = .readingHead(deadline: loop.now + loop.config.handshakeTimeout.nanoseconds)
    }

    deinit {
        assert(!socket.isOpen, "a connection is reaped (socket closed) before it is released")
    }

    // MARK: - Input

    /// The socket is readable: read into the loop's buffer and process, a bounded number of times.
    func readable() {
        for _ in 0..<4 where !isCloseRequested && !isReadPaused {
            let buffer = loop.readBuffer
            let count: Int
            do {
                switch try receive(into: buffer) {
                case .wouldBlock: return
                case .processed(let n): count = n
                }
            } catch {
                Log.debug("read failed", [("error", "\(error)")])
                if tls != nil { loop.metrics.tlsFailures.add(1, ordering: .relaxed) }
                requestClose()
                return
            }
            if count == 0 {
                requestClose()  // end of stream: a peer that leaves without a close frame is simply gone
                return
            }
            lastReadAt = loop.now
            process(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
            if count < buffer.count && tls?.hasBufferedInput != true { return }
        }
    }

    // MARK: - Bytes in and out: the socket's, or through TLS

    private func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        guard let tls else { return try socket.read(into: buffer) }
        if !tls.sawHandshakeRecord {
            switch try socket.peekByte() {
            case .wouldBlock: return .wouldBlock
            case .processed(nil): return .processed(0)
            case .processed(let byte?):
                if TLSStream.startsPlainHTTP(byte) {
                    refusePlainHTTP()
                    return .wouldBlock
                }
                tls.sawHandshakeRecord = true
            }
        }
        let handshaking = !tls.isHandshakeDone
        let result = try tls.read(into: buffer)
        if handshaking && tls.isHandshakeDone {
            loop.metrics.tlsHandshakes.add(1, ordering: .relaxed)
            if tls.isResumed { loop.metrics.tlsResumed.add(1, ordering: .relaxed) }
        }
        if tls.readWaitsForWritable { loop.updateInterest(self, writable: true) }
        if tls.writeWaitsForReadable { loop.flushSoon(self) }
        return result
    }

    private func send(_ iovecs: UnsafeBufferPointer<iovec>) throws(SystemError) -> IOResult<Int> {
        guard let tls else { return try socket.writev(iovecs) }
        return try tls.writev(iovecs)
    }

    private func send(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        guard let tls else { return try socket.write(bytes) }
        return try tls.write(bytes)
    }

    /// Plain HTTP on a TLS port (`http://` or `ws://` for `https://`/`wss://`): a plain 400 that
    /// says so, as nginx does, instead of a silent handshake failure.
    private func refusePlainHTTP() {
        let scheme = kind == .client ? "wss:// (or https://)" : "https://"
        let answer = Response.plain(400, "this port speaks TLS: use \(scheme)").serialized(keepAlive: false)
        // Best effort, both: the socket is new and empty, and the request is read and dropped so
        // that closing with it unread does not reset the connection before the answer arrives.
        _ = try? answer.withUnsafeBytes { bytes throws(SystemError) in try socket.write(bytes) }
        _ = try? socket.read(into: loop.readBuffer)
        loop.metrics.tlsFailures.add(1, ordering: .relaxed)
        socket.shutdownWrite()
        hasShutDownWrite = true
        requestClose()
    }

    /// No more writes from us: TLS's close_notify, then TCP's FIN.
    private func shutdownWrite() {
        tls?.sendCloseNotify()
        socket.shutdownWrite()
        hasShutDownWrite = true
    }

    private func process(_ bytes: UnsafeMutableRawBufferPointer) {
        switch phase {
        case .readingHead:
            readHead(bytes)
        case .readingBody:
            readBody(bytes)
        case .awaitingAnswer:
            // The next request arrived before the answer to this one: kept until then, bounded.
            guard let http, http.leftover.count + bytes.count <= loop.config.maxAdminBodyBytes + 8192 else {
                requestClose()
                return
            }
            http.leftover.append(contentsOf: bytes)
        case .webSocket:
            readFrames(bytes)
        case .closing:
            break  // draining: what the peer still sends is discarded
        }
    }

    private func readHead(_ bytes: UnsafeMutableRawBufferPointer) {
        let step: RequestParser.Step
        do {
            guard let http else { return }
            step = try http.parser.feed(UnsafeRawBufferPointer(bytes))
        } catch {
            loop.metrics.handshakesRejected.add(1, ordering: .relaxed)
            respondAndClose(.plain(error.status, error.reason))
            return
        }
        guard case .head(let head, let leftover) = step else { return }
        let rest = UnsafeMutableRawBufferPointer(rebasing: bytes[(bytes.count - leftover)...])
        switch kind {
        case .client: upgrade(head, rest: rest)
        case .admin: adminRequestStarted(head, rest: rest)
        }
    }

    // MARK: - WebSocket upgrade (client listener)

    private func upgrade(_ head: RequestHead, rest: UnsafeMutableRawBufferPointer) {
        if let answer = loop.shard?.answerHTTP(head) {
            respondAndClose(answer)
            return
        }
        guard let endpoint = Endpoint.route(head.path, config: loop.config) else {
            loop.metrics.handshakesRejected.add(1, ordering: .relaxed)
            respondAndClose(.plain(404, "no WebSocket endpoint at \(head.path); connect to \(Endpoint.clientPath)"))
            return
        }
        let accepted: ServerHandshake.Accepted
        do {
            accepted = try ServerHandshake.accept(
                method: head.method, httpVersion: head.version, headers: head.headers,
                subprotocols: endpoint == .client ? Endpoint.subprotocols : [], compression: loop.config.compression)
        } catch {
            loop.metrics.handshakesRejected.add(1, ordering: .relaxed)
            respondAndClose(.plain(error.status, error.reason, headers: error.headers))
            return
        }
        var refusal: UpgradeAdmission.Refusal?
        if endpoint == .client {
            refusal = UpgradeAdmission.refusal(
                origin: head.headers["Origin"], open: loop.metrics.webSocketConnections.load(ordering: .relaxed),
                config: loop.config)
            if refusal == nil, !loop.admitAddress(of: self) { refusal = .address(loop.config.maxConnectionsPerAddress) }
        }
        if let refusal {
            loop.metrics.handshakesRejected.add(1, ordering: .relaxed)
            switch refusal {
            case .origin: loop.metrics.originRefusals.add(1, ordering: .relaxed)
            case .capacity: loop.metrics.capacityRefusals.add(1, ordering: .relaxed)
            case .address: loop.metrics.addressRefusals.add(1, ordering: .relaxed)
            }
            respondAndClose(refusal.response)
            return
        }
        http = nil
        if endpoint == .client {
            // A token may come on the upgrade instead of in hello (DESIGN §3).
            var upgradeToken: String?
            if let authorization = head.headers["Authorization"], authorization.hasPrefix("Bearer ") {
                upgradeToken = String(authorization.dropFirst("Bearer ".count))
            } else if let token = head.query.first(where: { $0.name == "token" })?.value {
                upgradeToken = token
            }
            session = Session(
                helloDeadline: loop.now + loop.config.helloTimeout.nanoseconds, upgradeToken: upgradeToken)
        }
        outbound.append(Array(accepted.responseHead.utf8))
        releaseOutboundWhenFlushed = true
        loop.flushSoon(self)
        self.endpoint = endpoint
        if let deflate = accepted.deflate {
            deflateWindowBits = UInt8(deflate.serverMaxWindowBits)
            loop.metrics.compressedConnections.add(1, ordering: .relaxed)
        }
        if endpoint == .echo { reader = ReaderBox(makeReader(endpoint)) }
        isWebSocket = true
        phase = .webSocket
        lastPingAt = loop.now
        loop.metrics.webSocketConnections.add(1, ordering: .relaxed)
        if rest.count > 0 { readFrames(rest) }
    }

    private func readFrames(_ bytes: UnsafeMutableRawBufferPointer) {
        // The reader is decoded in place in its box (its buffers stay uniquely referenced). On
        // /v1/connect it is dropped once nothing of a message is pending (memory per idle client).
        guard phase == .webSocket, let endpoint else { return }
        let box = reader ?? ReaderBox(makeReader(endpoint))
        reader = box
        let inflater = deflateWindowBits != 0 ? loop.compression.inflater : nil
        defer { if phase == .webSocket && endpoint == .client && box.reader.isIdle { reader = nil } }
        var offset = 0
        while !isCloseRequested, phase == .webSocket {
            let event: MessageReader.Event
            do {
                event = try box.reader.next(in: bytes, offset: &offset, inflater: inflater)
            } catch {
                loop.metrics.protocolCloses.add(1, ordering: .relaxed)
                Log.debug(
                    "protocol violation", [("error", error.description), ("code", Int(error.closeCode.rawValue))])
                perform(closeHandshake.protocolViolated(error))
                return
            }
            switch event {
            case .needMoreBytes:
                return
            case .message(let opcode, let payload):
                loop.metrics.messagesIn.add(1, ordering: .relaxed)
                if payload == .inflatedMessage { loop.metrics.compressedMessagesIn.add(1, ordering: .relaxed) }
                guard closeHandshake.isOpen else { continue }  // after our close, data is discarded (§7.1.4)
                guard withinMessageRate() else { continue }
                box.reader.withBytes(of: payload, input: bytes) { data in messageReceived(opcode, data) }
            case .ping(let payload):
                guard closeHandshake.isOpen, withinMessageRate() else { continue }
                box.reader.withBytes(of: payload, input: bytes) { data in
                    outbound.append { FrameEncoder.appendFrame(opcode: .pong, payload: data, to: &$0) }
                }
                loop.flushSoon(self)
                pauseReadingIfAboveHighWatermark()
            case .pong:
                break
            case .close(let close):
                perform(closeHandshake.peerSentClose(close))
                return
            }
        }
    }

    private func makeReader(_ endpoint: Endpoint) -> MessageReader {
        MessageReader(role: .server, limits: endpoint.limits(loop.config), acceptsCompressed: deflateWindowBits != 0)
    }

    /// Whether a client message or ping may be handled: over the rate, the first one is answered
    /// with a `rate_limited` error and dropped, the next one over closes with 1008.
    private func withinMessageRate() -> Bool {
        guard endpoint == .client else { return true }
        switch messageRate.admit(now: loop.now, limit: loop.config.clientMessageRate) {
        case .admit:
            return true
        case .warn:
            let limit = loop.config.clientMessageRate
            loop.shard?.receivedInvalid(
                WireError(
                    code: "rate_limited",
                    message: "more than \(limit.burst) messages at once or \(limit.perSecond) per second; "
                        + "this one was dropped, the next one over closes the connection", ref: nil),
                on: self)
            return false
        case .refuse:
            loop.metrics.rateLimitCloses.add(1, ordering: .relaxed)
            close(.policyViolation, reason: "message rate exceeded")
            return false
        }
    }

    /// A whole message arrived; `data` is valid only during the call.
    private func messageReceived(_ opcode: Opcode, _ data: UnsafeRawBufferPointer) {
        switch endpoint {
        case .echo:
            if deflateWindowBits != 0 {
                var frame: [UInt8] = []
                FrameEncoder.appendFrame(opcode: opcode, payload: data, to: &frame)
                outbound.append(wireForm(of: frame, shared: false))
            } else {
                outbound.append { FrameEncoder.appendFrame(opcode: opcode, payload: data, to: &$0) }
            }
            loop.metrics.messagesOut.add(1, ordering: .relaxed)
            loop.flushSoon(self)
            pauseReadingIfAboveHighWatermark()
        case .client:
            guard let shard = loop.shard else { return }
            guard opcode == .text else {
                shard.receivedInvalid(
                    WireError(code: "bad_message", message: "protocol v1 messages are JSON text, not binary", ref: nil),
                    on: self)
                return
            }
            do {
                shard.received(try ClientMessage.parse(data), on: self)
            } catch {
                shard.receivedInvalid(error, on: self)
            }
        case nil:
            break
        }
    }

    /// Sends a close we decided on (shutdown, policy) and waits for the answer.
    func close(_ code: CloseCode, reason: String) {
        guard isWebSocket else {
            requestClose()
            return
        }
        perform(
            closeHandshake.localClose(
                ClosePayload(code: code, reason: reason),
                deadline: loop.now + loop.config.closeTimeout.nanoseconds))
    }

    private func perform(_ action: CloseHandshake.Action) {
        switch action {
        case .sendClose(let payload):
            outbound.append { FrameEncoder.appendClose(payload, to: &$0) }
            loop.flushSoon(self)
        case .sendCloseAndShutdown(let payload):
            outbound.append { FrameEncoder.appendClose(payload, to: &$0) }
            closeAfterFlush()
        case .shutdown:
            closeAfterFlush()
        case .none:
            break
        }
    }

    // MARK: - Admin HTTP (admin listener)

    private func adminRequestStarted(_ head: RequestHead, rest: UnsafeMutableRawBufferPointer) {
        if head.headers["Transfer-Encoding"] != nil {
            respondAndClose(
                .error(411, code: "length_required", message: "send the body with Content-Length, not chunked"))
            return
        }
        // RFC 9112 §6.3: one Content-Length of digits only; two, or a sign, is a framing attack.
        guard head.headers.count(of: "Content-Length") <= 1 else {
            respondAndClose(.error(400, code: "bad_request", message: "the request has more than one Content-Length"))
            return
        }
        let lengthText = head.headers["Content-Length"] ?? "0"
        guard !lengthText.isEmpty, lengthText.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let length = Int(lengthText)
        else {
            respondAndClose(.error(400, code: "bad_request", message: "Content-Length must be a number of digits"))
            return
        }
        guard length <= loop.config.maxAdminBodyBytes else {
            respondAndClose(
                .error(
                    413, code: "too_large",
                    message:
                        "the body is \(length) bytes; the admin API accepts at most \(loop.config.maxAdminBodyBytes)"))
            return
        }
        guard let http else { return }
        http.pendingRequest = head
        http.body = []
        http.body.reserveCapacity(length)
        http.bodyExpected = length
        phase = .readingBody(deadline: loop.now + loop.config.handshakeTimeout.nanoseconds)
        readBody(rest)
    }

    private func readBody(_ bytes: UnsafeMutableRawBufferPointer) {
        guard let http else { return }
        let take = min(bytes.count, http.bodyExpected - http.body.count)
        http.body.append(contentsOf: bytes[0..<take])
        guard http.body.count == http.bodyExpected, let head = http.pendingRequest else { return }
        http.pendingRequest = nil
        let body = http.body
        http.body = []
        http.leftover = Array(bytes[take...])
        guard let controlPlane = loop.controlPlane else { return }
        phase = .awaitingAnswer
        pauseReading()
        let keepAlive = head.isKeepAlive
        controlPlane.handle(head, body: body, reply: AdminReply { [weak self] response in
            self?.answered(response, keepAlive: keepAlive)
        })
    }

    /// The control plane answered the request this connection sent (now or after its commit).
    private func answered(_ response: Response, keepAlive: Bool) {
        guard phase == .awaitingAnswer, !isCloseRequested, let http else { return }
        guard keepAlive else {
            respondAndClose(response)
            return
        }
        outbound.append(response.serialized(keepAlive: true))
        loop.flushSoon(self)
        http.parser = RequestParser()
        phase = .readingHead(deadline: loop.now + loop.config.idleTimeout.nanoseconds)
        resumeReading()
        let leftover = http.leftover
        http.leftover = []
        if !leftover.isEmpty {
            var bytes = leftover
            bytes.withUnsafeMutableBytes { readHead($0) }
        }
        loop.schedule(self)
    }

    // MARK: - Output and closing

    /// Writes the response with `Connection: close`, then closes.
    private func respondAndClose(_ response: Response) {
        outbound.append(response.serialized(keepAlive: false))
        closeAfterFlush()
    }

    private func closeAfterFlush() {
        if case .closing = phase { return }
        leaveWebSocket()
        phase = .closing(deadline: loop.now + loop.config.closeTimeout.nanoseconds)
        resumeReading()  // to see the peer's end of stream
        loop.flushSoon(self)
    }

    /// Writes what is queued. Called by the loop at the end of a tick and on EPOLLOUT.
    func flush() {
        guard !isCloseRequested else { return }
        if tls?.readWaitsForWritable == true { readable() }  // a TLS read waited for this
        guard !isCloseRequested else { return }
        if !outbound.isEmpty {
            do {
                switch try outbound.write(using: { iovecs throws(SystemError) in try send(iovecs) }) {
                case .processed(let n): loop.bytesWritten += n
                case .wouldBlock: break
                }
            } catch {
                Log.debug("write failed", [("error", "\(error)")])
                requestClose()
                return
            }
        }
        if outbound.isEmpty {
            // After the 101, and on /v1/connect after every drain (clients mostly get shared
            // frames): an idle connection holds no buffer. The echo endpoint keeps its buffer.
            if releaseOutboundWhenFlushed || endpoint == .client {
                outbound = OutboundQueue()
                releaseOutboundWhenFlushed = false
            }
            if case .closing = phase, !hasShutDownWrite { shutdownWrite() }
            if isReadPaused && phase == .webSocket { resumeReading() }
        } else if isReadPaused == false && outbound.pendingBytes > loop.config.outboundHardLimit {
            loop.metrics.slowConsumerCloses.add(1, ordering: .relaxed)
            requestClose()
            return
        }
        if isReadPaused && outbound.pendingBytes < loop.config.outboundLowWatermark { resumeReading() }
        if session?.needsCatchUp == true && outbound.pendingBytes < loop.config.outboundLowWatermark {
            loop.shard?.drained(self)
        }
        loop.updateInterest(self, writable: !outbound.isEmpty || tls?.readWaitsForWritable == true)
    }

    /// DESIGN §9: every byte queued for a connection counts — what it is sent and what the hub
    /// answers by itself (pongs, errors): above the high watermark the hub stops reading from it,
    /// so a client that sends without reading cannot make the hub queue without bound.
    private func pauseReadingIfAboveHighWatermark() {
        if outbound.pendingBytes > loop.config.outboundHighWatermark { pauseReading() }
    }

    private func pauseReading() {
        guard !isReadPaused else { return }
        isReadPaused = true
        loop.updateInterest(self, writable: true)
    }

    private func resumeReading() {
        guard isReadPaused else { return }
        isReadPaused = false
        loop.updateInterest(self, writable: !outbound.isEmpty)
    }

    /// Marks the connection for reaping at the end of the tick.
    func requestClose() {
        guard !isCloseRequested else { return }
        isCloseRequested = true
        loop.reapSoon(self)
    }

    /// Closes the socket; called by the loop only, after the tick's work.
    func reap() {
        leaveWebSocket()
        socket.close()
    }

    var closeHandshakeIsOpen: Bool { closeHandshake.isOpen && !isCloseRequested }

    /// Queues a frame shared with other connections (by reference, no copy). Past the hard limit
    /// the client is too slow to keep: the connection is dropped (DESIGN §9).
    ///
    /// `writeNow` (fan-out: one frame per connection per event) writes at once when nothing is
    /// queued, so a fan-out is one pass of sends instead of a pass of queueing and a pass of
    /// writes at the end of the tick; only what the socket does not take is queued.
    func queueShared(_ plainFrame: [UInt8], writeNow: Bool = false) {
        guard closeHandshakeIsOpen else { return }
        let frame = wireForm(of: plainFrame, shared: true)
        if writeNow && outbound.isEmpty && phase == .webSocket {
            let written: Int
            do {
                switch try frame.withUnsafeBytes({ bytes throws(SystemError) in try send(bytes) }) {
                case .processed(let count): written = count
                case .wouldBlock: written = 0
                }
            } catch {
                Log.debug("write failed", [("error", "\(error)")])
                requestClose()
                return
            }
            loop.bytesWritten += written
            if written == frame.count { return }
            outbound.appendShared(frame, written: written)
            loop.updateInterest(self, writable: true)
            return
        }
        outbound.appendShared(frame)
        loop.flushSoon(self)
        if outbound.pendingBytes > loop.config.outboundHardLimit {
            loop.metrics.slowConsumerCloses.add(1, ordering: .relaxed)
            requestClose()
        }
        pauseReadingIfAboveHighWatermark()
    }

    /// `frame` as this connection is sent it: its compressed twin when permessage-deflate was
    /// agreed and compressing pays (`shared`: made once per loop for every connection that gets it).
    private func wireForm(of frame: [UInt8], shared: Bool) -> [UInt8] {
        guard deflateWindowBits != 0 else { return frame }
        let bits = Int(deflateWindowBits), minimum = loop.config.compressionMinimumBytes
        let compressed =
            shared
            ? loop.compression.compressed(frame, windowBits: bits, minimumBytes: minimum)
            : loop.compression.compressedOnce(frame, windowBits: bits, minimumBytes: minimum)
        guard let compressed else { return frame }
        loop.compressedMessagesOut += 1
        return compressed
    }

    private func leaveWebSocket() {
        guard isWebSocket else { return }
        isWebSocket = false
        if deflateWindowBits != 0 { loop.metrics.compressedConnections.subtract(1, ordering: .relaxed) }
        reader = nil
        loop.metrics.webSocketConnections.subtract(1, ordering: .relaxed)
    }

    // MARK: - Timers

    /// The earliest instant something must be checked.
    var nextDeadline: UInt64? {
        switch phase {
        case .readingHead(let deadline), .readingBody(let deadline), .closing(let deadline):
            return deadline
        case .awaitingAnswer:
            return nil
        case .webSocket:
            // Only what `timerFired` acts on in this state: after our close frame, just its deadline.
            if case .closeSent(let deadline) = closeHandshake.state { return deadline }
            var next = pingBase + pingInterval
            next = min(next, lastReadAt + loop.config.idleTimeout.nanoseconds)
            if let helloDeadline = session?.helloDeadline { next = min(next, helloDeadline) }
            return next
        }
    }

    func timerFired(now: UInt64) {
        switch phase {
        case .readingHead(let deadline), .readingBody(let deadline):
            guard now >= deadline else { return }
            loop.metrics.timeoutCloses.add(1, ordering: .relaxed)
            if let tls, !tls.isHandshakeDone {
                requestClose()  // the TLS handshake did not finish: there is no channel to answer on
            } else if kind == .admin && parserIsIdle {
                requestClose()  // an idle keep-alive connection: nothing to answer
            } else {
                respondAndClose(.plain(408, "the request did not arrive within \(loop.config.handshakeTimeout)"))
            }
        case .closing(let deadline):
            if now >= deadline { requestClose() }
        case .awaitingAnswer:
            break
        case .webSocket:
            perform(closeHandshake.timerFired(now: now))
            guard closeHandshake.isOpen else { return }
            if now >= lastReadAt + loop.config.idleTimeout.nanoseconds {
                loop.metrics.timeoutCloses.add(1, ordering: .relaxed)
                requestClose()  // the peer is gone: no traffic, no pong
            } else if let helloDeadline = session?.helloDeadline, now >= helloDeadline {
                loop.metrics.timeoutCloses.add(1, ordering: .relaxed)
                loop.shard?.sessionTimerFired(self, now: now)
            } else if now >= pingBase + pingInterval {
                lastPingAt = now
                if sendsHeartbeats && outbound.isEmpty {
                    // Output already queued tells the client the hub is there once it arrives.
                    outbound.append { $0 += ServerMessage.pingAndHeartbeat }
                } else {
                    outbound.append { FrameEncoder.appendFrame(opcode: .ping, payload: [], to: &$0) }
                }
                loop.flushSoon(self)
            }
        }
    }

    /// What the next ping is counted from: the last ping or read — or, for a client that wants
    /// heartbeats, the last ping alone, so that one arrives every interval even while it talks.
    private var pingBase: UInt64 { sendsHeartbeats ? lastPingAt : max(lastReadAt, lastPingAt) }

    /// Pings go after this long (ns); for a client that wants heartbeats, at the loop's heartbeat
    /// interval, which a reload never lengthens past what the client was told.
    private var pingInterval: UInt64 { sendsHeartbeats ? loop.heartbeatInterval : loop.config.pingInterval.nanoseconds }

    private var parserIsIdle: Bool { http.map { $0.pendingRequest == nil && $0.parser.isEmpty } ?? true }
}
