import HTTP2

/// The client side of an HTTP/2 connection (`HTTP2ClientConnection`) after `start()`, with a few
/// requests sent, fed any bytes as a server's: frames, field blocks, windows, GOAWAY, garbage.
///
/// Input: a settings byte (bit 0: small limits — 256-octet bodies, a 1 KiB header list, 2
/// streams — so each limit is reachable in short inputs; bits 1–3: how many requests, 0–7, and
/// bit 4: they carry a 40 KiB body, so send flow control runs), a chunk-plan seed byte, then
/// the server's octets.
///
/// Properties:
/// - it never traps, whatever the server sends, however the reads cut it;
/// - every request is answered at most once (a `.response` or a `.failed`), and after a
///   `.connectionError` every request has been answered and nothing else comes;
/// - buffers stay bounded: unparsed input within one frame and one chunk, response bodies within
///   `maxResponseBody` per open stream, and open streams within both sides' limits;
/// - what the client writes parses as frames (after the preface) with the strict parser.
enum HTTP2FrameFuzz {
    static func run(_ data: UnsafeRawBufferPointer) throws(PropertyViolation) {
        var input = FuzzInput(data)
        let flags = input.byte()
        var settings = HTTP2ClientConnection.Settings()
        if flags & 1 != 0 {
            settings.maxResponseBody = 256
            settings.maxHeaderListSize = 1024
            settings.maxConcurrentStreams = 2
        }
        let requests = Int(flags >> 1 & 7)
        let body = flags & 16 != 0 ? [UInt8](repeating: 0x61, count: 40 << 10) : []
        let plan = ChunkPlan(seed: input.byte())
        let stream = input.rest()

        var connection = HTTP2ClientConnection(settings: settings)
        var written = OutputCheck()
        try written.take(connection.start())
        var answered: Set<RequestID> = []
        var dead = false
        func take(_ actions: [HTTP2ClientConnection.Action]) throws(PropertyViolation) {
            for action in actions {
                switch action {
                case .write: try written.take([action])
                case .response(let id, let response):
                    try check(!dead, "\(id) answered after the connection error")
                    try check(answered.insert(id).inserted, "\(id) answered twice")
                    try check(response.body.count <= settings.maxResponseBody, "a body of \(response.body.count)")
                case .failed(let id, _):
                    try check(answered.insert(id).inserted, "\(id) answered twice")
                case .pingAcked, .goAway:
                    try check(!dead, "\(action) after the connection error")
                case .connectionError:
                    try check(!dead, "a second connection error")
                    dead = true
                }
            }
        }
        for index in 0..<requests {
            let request = HTTP2Request(authority: "push.example", path: "/\(index)", body: body)
            try take(connection.send(request: request, id: RequestID(UInt64(index))))
        }
        for chunk in plan.chunks(of: stream.count) {
            let openBefore = connection.openStreams
            try take(connection.received(stream[chunk]))
            let limit = HTTP2FrameParser.headerLength + settings.maxFrameSize + chunk.count
            try check(connection.bufferedInput <= limit, "\(connection.bufferedInput) octets buffered")
            try check(
                connection.bufferedResponseBodies <= connection.openStreams * settings.maxResponseBody,
                "\(connection.bufferedResponseBodies) octets of bodies on \(connection.openStreams) streams")
            // No stream opens at either side's limit; a server that lowers its limit leaves the streams
            // already open above it (RFC 9113 §5.1.2) until they close.
            let peerLimit = connection.peerSettings.maxConcurrentStreams ?? Int.max
            try check(
                connection.openStreams <= max(openBefore, min(settings.maxConcurrentStreams, peerLimit))
                    || connection.state != .open,
                "\(connection.openStreams) streams open (\(openBefore) before)")
        }
        if dead {
            try check(answered.count == requests, "\(requests - answered.count) requests unanswered after the error")
            try check(connection.received([0, 0, 0, 4, 0, 0, 0, 0, 0]).isEmpty, "actions after the connection error")
        }
        try take(connection.close())
        try check(answered.count == requests, "\(requests - answered.count) requests unanswered after close")
    }

    /// Parses what the client writes, strictly: the preface, then well-formed frames.
    struct OutputCheck {
        private var parser = HTTP2FrameParser(maxFrameSize: 1 << 24 - 1)
        private var sawPreface = false

        mutating func take(_ actions: [HTTP2ClientConnection.Action]) throws(PropertyViolation) {
            for case .write(let bytes) in actions {
                var bytes = bytes[...]
                if !sawPreface {
                    try check(bytes.starts(with: HTTP2.clientPreface), "the client did not start with the preface")
                    bytes = bytes.dropFirst(HTTP2.clientPreface.count)
                    sawPreface = true
                }
                parser.append(bytes)
                do {
                    while try parser.next() != nil {}
                } catch {
                    throw PropertyViolation(description: "the client wrote a bad frame: \(error)")
                }
            }
        }
    }
}
