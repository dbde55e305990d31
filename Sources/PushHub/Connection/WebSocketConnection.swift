import WSProtocol

/// One connection on the client listener: transport only. It reads the upgrade request and
/// answers it (`WebSocketConnection+Upgrade.swift`), then speaks WebSocket (RFC 6455): frames in
/// and out, permessage-deflate, the close handshake, pings and heartbeats, the message rate, the
/// watermarks. On `/v1/connect` what the client says goes to the loop's `Shard`, which owns the
/// client's `Session` and drives it; the connection knows only the session's slot there
/// (`session`). On `--echo-path` it echoes. The byte stream under it — TLS, writing, closing —
/// is `LoopConnection`'s.
///
/// Lifecycle: reading the upgrade request → open (after the 101) → closing → reaped.
/// Invariants: `input` is `.request` until the 101 and `.frames` after it; the frame reader is
/// nil on `/v1/connect` between messages (made again for the next bytes, so an idle client
/// carries none) and once closing starts; `session` is set exactly on a `/v1/connect` connection
/// after its 101, until its reap ends the session; `isWebSocket` is true from the 101 until the
/// connection starts closing (counted in the gauge meanwhile).
final class WebSocketConnection: LoopConnection {
    /// What reads the connection's bytes.
    enum Input {
        /// The upgrade request being read, with its deadline (boxed: dropped at the 101).
        case request(UpgradeRequest)
        /// WebSocket frames, after the 101. The reader is boxed, so that a connection carries a
        /// reference for it rather than its 200 bytes; on `/v1/connect` it is dropped (nil)
        /// between messages.
        case frames(ReaderBox?)
    }

    final class UpgradeRequest {
        var parser = RequestParser()
        /// Answered 408 after this (the handshake timeout).
        let deadline: UInt64
        init(deadline: UInt64) { self.deadline = deadline }
    }

    final class ReaderBox {
        var reader: MessageReader
        init(_ reader: MessageReader) { self.reader = reader }
    }

    static let listenerKind = ListenerKind.client

    // Stored properties are ordered so that the object stays within a 176-byte malloc chunk
    // (memory per connection, DESIGN §9; `MemoryBudgetTests`): the small fields sit in the
    // padding after the 9-byte ones (a struct or enum with a tag byte).
    /// The owning loop, which holds this connection until it reaps it, so it always outlives it:
    /// `unowned(unsafe)` spares the reference-count check on every use (several per delivery).
    unowned(unsafe) let loop: ClientLoop
    var stream: ByteStream
    private var input: Input
    private var lastPingAt: UInt64
    /// `/v1/connect` messages and pings against `config.clientMessageRate`.
    private var messageRate = MessageRateLimit.Bucket()
    /// The LZ77 window the hub deflates with for this client (9...15), or 0 without
    /// permessage-deflate. Everything else about compression is the loop's (`FrameCompression`).
    private var deflateWindowBits: UInt8 = 0
    /// The session asked for `heartbeat` messages: they go with every ping, and pings go every
    /// ping interval whatever the client sends (DESIGN §3; docs/protocol.md "Heartbeats").
    var sendsHeartbeats = false
    /// Set with the 101: once it is written, the outbound buffer is freed, so that an idle
    /// connection holds no buffer.
    private var releaseOutboundWhenFlushed = false
    /// Where the loop's `Shard` keeps this client's session (`/v1/connect` only).
    private(set) var session: SessionSlot?
    private var closeHandshake = CloseHandshake()
    /// True from the 101 until the connection starts closing; counted in the gauge meanwhile.
    private(set) var isWebSocket = false
    private(set) var endpoint: Endpoint?

    init(token: UInt64, socket: Socket, loop: ClientLoop, tls: TLSStream?) {
        self.loop = loop
        stream = ByteStream(token: token, socket: socket, tls: tls, now: loop.now)
        input = .request(UpgradeRequest(deadline: loop.now + loop.config.handshakeTimeout.nanoseconds))
        lastPingAt = loop.now
    }

    deinit {
        assert(!stream.socket.isOpen, "a connection is reaped (socket closed) before it is released")
    }

    /// Whether updates are being held back: the outbound queue is above the high watermark.
    var isCongested: Bool { stream.outbound.pendingBytes > loop.config.outboundHighWatermark }

    /// Upgraded and not closing: frames are read and written.
    private var isOpen: Bool {
        guard case .frames = input else { return false }
        return !stream.isClosing
    }

    // MARK: - LoopConnection

    func received(_ bytes: UnsafeMutableRawBufferPointer) {
        switch input {
        case .request(let request):
            guard let (head, rest) = readRequestHead(&request.parser, bytes) else { return }
            upgrade(head, rest: rest)
        case .frames:
            readFrames(bytes)
        }
    }

    func closingStarted() { leaveWebSocket() }

    func flushed() {
        if stream.outbound.isEmpty {
            // After the 101, and on /v1/connect after every drain (clients mostly get shared
            // frames): an idle connection holds no buffer. The echo endpoint keeps its buffer.
            if releaseOutboundWhenFlushed || endpoint == .client {
                stream.outbound = OutboundQueue()
                releaseOutboundWhenFlushed = false
            }
            if stream.isReadPaused && isOpen { resumeReading() }
        }
        if session != nil && stream.outbound.pendingBytes < loop.config.outboundLowWatermark {
            loop.shard?.outboundDrained(self)
        }
    }

    var openDeadline: UInt64? {
        switch input {
        case .request(let request):
            return request.deadline
        case .frames:
            // Only what `openTimerFired` acts on: after our close frame, just its deadline.
            if case .closeSent(let deadline) = closeHandshake.state { return deadline }
            var next = pingBase + pingInterval
            next = min(next, stream.lastReadAt + loop.config.idleTimeout.nanoseconds)
            if let helloDeadline = sessionDeadline { next = min(next, helloDeadline) }
            return next
        }
    }

    func openTimerFired(now: UInt64) {
        switch input {
        case .request(let request):
            guard now >= request.deadline else { return }
            requestTimedOut(idle: false)
        case .frames:
            perform(closeHandshake.timerFired(now: now))
            guard closeHandshake.isOpen else { return }
            if now >= stream.lastReadAt + loop.config.idleTimeout.nanoseconds {
                loop.metrics.timeoutCloses.add(1, ordering: .relaxed)
                requestClose()  // the peer is gone: no traffic, no pong
            } else if let helloDeadline = sessionDeadline, now >= helloDeadline {
                loop.metrics.timeoutCloses.add(1, ordering: .relaxed)
                loop.shard?.sessionTimerFired(self, now: now)
            } else if now >= pingBase + pingInterval {
                lastPingAt = now
                if sendsHeartbeats && stream.outbound.isEmpty {
                    // Output already queued tells the client the hub is there once it arrives.
                    stream.outbound.append { $0 += ServerMessage.pingAndHeartbeat }
                } else {
                    stream.outbound.append { FrameEncoder.appendFrame(opcode: .ping, payload: [], to: &$0) }
                }
                loop.flushSoon(self)
            }
        }
    }

    func shutDown() { close(.goingAway, reason: "hub shutting down") }

    func reap() {
        if session != nil {
            loop.shard?.sessionEnded(self)
            session = nil
        }
        leaveWebSocket()
        stream.close()
    }

    /// The deadline the session's timer acts on (its hello deadline), if it has one.
    private var sessionDeadline: UInt64? { session == nil ? nil : loop.shard?.sessionDeadline(of: self) }

    /// What the next ping is counted from: the last ping or read — or, for a client that wants
    /// heartbeats, the last ping alone, so that one arrives every interval even while it talks.
    private var pingBase: UInt64 { sendsHeartbeats ? lastPingAt : max(stream.lastReadAt, lastPingAt) }

    /// Pings go after this long (ns); for a client that wants heartbeats, at the loop's heartbeat
    /// interval, which a reload never lengthens past what the client was told.
    private var pingInterval: UInt64 {
        sendsHeartbeats ? loop.heartbeatInterval : loop.config.pingInterval.nanoseconds
    }

    // MARK: - Becoming a WebSocket

    /// The 101 is decided (`upgrade`): queue it and read frames from here, starting with `rest`,
    /// the bytes that came after the request.
    func opened(
        _ endpoint: Endpoint, responseHead: String, deflate: DeflateParameters?, session: SessionSlot?,
        rest: UnsafeMutableRawBufferPointer
    ) {
        stream.outbound.append(Array(responseHead.utf8))
        releaseOutboundWhenFlushed = true
        loop.flushSoon(self)
        self.endpoint = endpoint
        self.session = session
        if let deflate {
            deflateWindowBits = UInt8(deflate.serverMaxWindowBits)
            loop.metrics.compressedConnections.add(1, ordering: .relaxed)
        }
        input = .frames(endpoint == .echo ? ReaderBox(makeReader(endpoint)) : nil)
        isWebSocket = true
        lastPingAt = loop.now
        loop.metrics.webSocketConnections.add(1, ordering: .relaxed)
        if rest.count > 0 { readFrames(rest) }
    }

    private func leaveWebSocket() {
        guard isWebSocket else { return }
        isWebSocket = false
        if deflateWindowBits != 0 { loop.metrics.compressedConnections.subtract(1, ordering: .relaxed) }
        input = .frames(nil)
        loop.metrics.webSocketConnections.subtract(1, ordering: .relaxed)
    }

    // MARK: - Frames in

    private func readFrames(_ bytes: UnsafeMutableRawBufferPointer) {
        // The reader is decoded in place in its box (its buffers stay uniquely referenced). On
        // /v1/connect it is dropped once nothing of a message is pending (memory per idle client).
        guard isOpen, let endpoint else { return }
        let box: ReaderBox
        if case .frames(let reader?) = input {
            box = reader
        } else {
            box = ReaderBox(makeReader(endpoint))
            input = .frames(box)
        }
        let inflater = deflateWindowBits != 0 ? loop.compression.inflater : nil
        defer { if isOpen && endpoint == .client && box.reader.isIdle { input = .frames(nil) } }
        var offset = 0
        while !stream.isCloseRequested, isOpen {
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
                    stream.outbound.append { FrameEncoder.appendFrame(opcode: .pong, payload: data, to: &$0) }
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
                stream.outbound.append(wireForm(of: frame, shared: false))
            } else {
                stream.outbound.append { FrameEncoder.appendFrame(opcode: opcode, payload: data, to: &$0) }
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

    // MARK: - The close handshake (RFC 6455 §7)

    /// Sends a close we decided on (shutdown, policy) and waits for the answer; before the 101,
    /// just closes.
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
            stream.outbound.append { FrameEncoder.appendClose(payload, to: &$0) }
            loop.flushSoon(self)
        case .sendCloseAndShutdown(let payload):
            stream.outbound.append { FrameEncoder.appendClose(payload, to: &$0) }
            closeAfterFlush()
        case .shutdown:
            closeAfterFlush()
        case .none:
            break
        }
    }

    // MARK: - Frames out

    /// Queues a frame shared with other connections (by reference, no copy). Past the hard limit
    /// the client is too slow to keep: the connection is dropped (DESIGN §9).
    ///
    /// `writeNow` (fan-out: one frame per connection per event) writes at once when nothing is
    /// queued, so a fan-out is one pass of sends instead of a pass of queueing and a pass of
    /// writes at the end of the tick; only what the socket does not take is queued.
    func queueShared(_ plainFrame: [UInt8], writeNow: Bool = false) {
        guard closeHandshake.isOpen && !stream.isCloseRequested else { return }
        let frame = wireForm(of: plainFrame, shared: true)
        if writeNow && stream.outbound.isEmpty && isOpen {
            let written: Int
            do {
                switch try frame.withUnsafeBytes({ bytes throws(SystemError) in try stream.write(bytes) }) {
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
            stream.outbound.appendShared(frame, written: written)
            loop.updateInterest(self, writable: true)
            return
        }
        stream.outbound.appendShared(frame)
        loop.flushSoon(self)
        if stream.outbound.pendingBytes > loop.config.outboundHardLimit {
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
}

@available(*, unavailable)
extension WebSocketConnection: Sendable {}
