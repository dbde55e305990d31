/// One connection on the admin listener: HTTP/1.1 requests (keep-alive, pipelined), each read
/// whole and handed to the control plane (`ControlPlane.handle(_:body:reply:)`), whose answer is
/// written when it comes (at once, or after its commit or gather). The byte stream under it —
/// TLS, writing, closing — is `LoopConnection`'s.
///
/// Lifecycle: `readingHead` → `readingBody` → `awaitingAnswer` → `readingHead` again with
/// keep-alive, or closing after the answer (`Connection: close`, a refusal, a timeout).
/// Invariants: `pendingRequest` is set exactly in `readingBody`; at most one request is with the
/// control plane at a time, and bytes of the next one that arrive before its answer wait in
/// `leftover` (bounded: past it the connection closes). Reading pauses when a request is handed
/// over, until the next flush finds the queue below the low watermark (as on every connection).
final class AdminConnection: LoopConnection {
    enum Phase: Equatable {
        /// Reading a request head; answered 408 after the deadline (or closed, between requests).
        case readingHead(deadline: UInt64)
        /// Reading a request body (`bodyExpected` bytes); answered 408 after the deadline.
        case readingBody(deadline: UInt64)
        /// A request is with the control plane (waiting for its commit or its gather).
        case awaitingAnswer
    }

    static let listenerKind = ListenerKind.admin

    /// The owning loop (the control plane's), which outlives its connections.
    unowned(unsafe) let loop: EventLoop<AdminConnection>
    var stream: ByteStream
    private(set) var phase: Phase
    private var parser = RequestParser()
    private var pendingRequest: RequestHead?
    private var body: [UInt8] = []
    private var bodyExpected = 0
    /// Bytes of the next (pipelined) request that arrived while an answer was awaited.
    private var leftover: [UInt8] = []

    init(token: UInt64, socket: Socket, loop: EventLoop<AdminConnection>, tls: TLSStream?) {
        self.loop = loop
        stream = ByteStream(token: token, socket: socket, tls: tls, now: loop.now)
        phase = .readingHead(deadline: loop.now + loop.config.handshakeTimeout.nanoseconds)
    }

    deinit {
        assert(!stream.socket.isOpen, "a connection is reaped (socket closed) before it is released")
    }

    // MARK: - LoopConnection

    func received(_ bytes: UnsafeMutableRawBufferPointer) {
        switch phase {
        case .readingHead:
            readHead(bytes)
        case .readingBody:
            readBody(bytes)
        case .awaitingAnswer:
            // The next request arrived before the answer to this one: kept until then, bounded.
            guard leftover.count + bytes.count <= loop.config.maxAdminBodyBytes + 8192 else {
                requestClose()
                return
            }
            leftover.append(contentsOf: bytes)
        }
    }

    func closingStarted() {}

    func flushed() {}

    var openDeadline: UInt64? {
        switch phase {
        case .readingHead(let deadline), .readingBody(let deadline): deadline
        case .awaitingAnswer: nil
        }
    }

    func openTimerFired(now: UInt64) {
        switch phase {
        case .readingHead(let deadline), .readingBody(let deadline):
            guard now >= deadline else { return }
            requestTimedOut(idle: pendingRequest == nil && parser.isEmpty)
        case .awaitingAnswer:
            break
        }
    }

    func shutDown() { requestClose() }

    func reap() { stream.close() }

    // MARK: - Requests

    private func readHead(_ bytes: UnsafeMutableRawBufferPointer) {
        guard let (head, rest) = readRequestHead(&parser, bytes) else { return }
        requestStarted(head, rest: rest)
    }

    private func requestStarted(_ head: RequestHead, rest: UnsafeMutableRawBufferPointer) {
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
        pendingRequest = head
        body = []
        body.reserveCapacity(length)
        bodyExpected = length
        phase = .readingBody(deadline: loop.now + loop.config.handshakeTimeout.nanoseconds)
        readBody(rest)
    }

    private func readBody(_ bytes: UnsafeMutableRawBufferPointer) {
        let take = min(bytes.count, bodyExpected - body.count)
        body.append(contentsOf: bytes[0..<take])
        guard body.count == bodyExpected, let head = pendingRequest else { return }
        pendingRequest = nil
        let request = body
        body = []
        leftover = Array(bytes[take...])
        guard let controlPlane = loop.controlPlane else { return }
        phase = .awaitingAnswer
        pauseReading()
        let keepAlive = head.isKeepAlive
        controlPlane.handle(
            head, body: request,
            reply: AdminReply { [weak self] response in
                self?.answered(response, keepAlive: keepAlive)
            })
    }

    /// The control plane answered the request this connection sent (now or after its commit).
    private func answered(_ response: Response, keepAlive: Bool) {
        guard phase == .awaitingAnswer, !stream.isClosing, !stream.isCloseRequested else { return }
        guard keepAlive else {
            respondAndClose(response)
            return
        }
        stream.outbound.append(response.serialized(keepAlive: true))
        loop.flushSoon(self)
        parser = RequestParser()
        phase = .readingHead(deadline: loop.now + loop.config.idleTimeout.nanoseconds)
        resumeReading()
        let next = leftover
        leftover = []
        if !next.isEmpty {
            var bytes = next
            bytes.withUnsafeMutableBytes { readHead($0) }
        }
        loop.schedule(self)
    }
}

@available(*, unavailable)
extension AdminConnection: Sendable {}
