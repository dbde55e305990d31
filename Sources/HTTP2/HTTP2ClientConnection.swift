/// The client side of one HTTP/2 connection (RFC 9113) as a state machine: it is told what
/// happened (`start`, `received`, `send`, `cancel`, `ping`, `close`) and answers with actions
/// for its caller, which owns the socket, the clock and the requests' callbacks. No I/O.
///
/// What it does: the preface and SETTINGS (push disabled), SETTINGS and PING acknowledgements,
/// requests as HEADERS (+ CONTINUATION) and DATA within the server's connection and stream
/// windows (§6.9; SETTINGS_INITIAL_WINDOW_SIZE changes applied to open streams), at most as
/// many open streams as both sides allow (the rest wait, in order), WINDOW_UPDATE for DATA
/// received, response assembly with its message rules (§8.1) and a body limit, GOAWAY (requests
/// above the last stream are unprocessed), and connection errors (GOAWAY sent, every request
/// failed).
///
/// Invariants:
/// - every request handed to `send` gets exactly one `.response` or `.failed`, unless
///   `cancel`led first;
/// - a request is in `queue` or in `streams`, never both; `streamOfRequest` indexes `streams`;
/// - `streams.count` ≤ our `maxConcurrentStreams`, and a stream opens only while `streams.count`
///   is below the server's SETTINGS_MAX_CONCURRENT_STREAMS — a server that lowers its limit may
///   have more open until they close (§5.1.2: it lets them complete or resets them itself);
/// - SETTINGS and PING acknowledgements not yet reported written (`written(through:)`) are at
///   most `settings.maxUnwrittenAcks`: a server that floods them ends the connection;
/// - a stream ID in `resetStreams` is closed, and was reset by us;
/// - the server never has more receive window than `Settings` gives it: DATA beyond it is a
///   FLOW_CONTROL_ERROR, never buffered;
/// - once `.closed`, every call returns no action but the failure of a new request.
public struct HTTP2ClientConnection: Sendable {
    /// What this client allows and asks for.
    public struct Settings: Equatable, Sendable {
        /// Streams we open at once at most, whatever the server allows: with `maxResponseBody`
        /// it bounds the memory of responses being received.
        public var maxConcurrentStreams = 1000
        /// Each stream's receive window (our SETTINGS_INITIAL_WINDOW_SIZE). At least 65,535: a
        /// server may use that default until it has read our SETTINGS.
        public var initialWindowSize = 1 << 20
        /// The connection's receive window, raised from 65,535 by a WINDOW_UPDATE at start.
        public var connectionWindowSize = 16 << 20
        /// Our SETTINGS_MAX_FRAME_SIZE: the longest frame the server may send.
        public var maxFrameSize = HTTP2Settings.defaultMaxFrameSize
        /// Our HPACK decoder's dynamic table (SETTINGS_HEADER_TABLE_SIZE); at least 4,096 for
        /// the same reason as the window.
        public var headerTableSize = 4096
        /// The largest header list (RFC 7541 §4.1 sizes) a response may have.
        public var maxHeaderListSize = 64 << 10
        /// The largest response body kept: beyond it the stream is cancelled and the request
        /// fails (`responseTooLarge`).
        public var maxResponseBody = 1 << 20
        /// SETTINGS and PING acknowledgements the connection writes while the caller reports
        /// none of them written (`written(through:)`), at most; one more is a flood, a connection
        /// error ENHANCE_YOUR_CALM. 1000 as nghttp2's `max_outbound_ack`: a server sends a few.
        public var maxUnwrittenAcks = 1000

        public init() {}
    }

    public enum Action: Equatable, Sendable {
        /// Octets to write to the server, in order.
        case write([UInt8])
        case response(RequestID, HTTP2Response)
        case failed(RequestID, HTTP2StreamError)
        /// The server answered our last `ping`.
        case pingAcked
        /// The server sent GOAWAY: no new streams; those above `lastStreamID` failed already.
        case goAway(lastStreamID: UInt32, error: HTTP2ErrorCode, debug: String)
        /// The server broke the protocol: GOAWAY was written, every request failed, the
        /// connection is closed.
        case connectionError(HTTP2ProtocolError)
    }

    public enum State: Equatable, Sendable {
        /// `start` not called yet: requests wait.
        case idle
        /// The preface went out; the server's SETTINGS has not come yet, so its limits are not
        /// known and no stream starts.
        case awaitingSettings
        case open
        /// The server sent GOAWAY: open streams at or below `lastStreamID` finish, nothing new starts.
        case goingAway(lastStreamID: UInt32)
        case closed
    }

    public let settings: Settings
    public internal(set) var state = State.idle
    /// What the server declared (RFC initial values until its SETTINGS).
    public internal(set) var peerSettings = HTTP2Settings()

    var parser: HTTP2FrameParser
    var encoder = HPACKEncoder()
    var decoder: HPACKDecoder
    var streams: [UInt32: HTTP2ClientStream] = [:]
    var streamOfRequest: [RequestID: UInt32] = [:]
    /// Requests not started yet, oldest first, from `queueHead` on.
    var queue: [(id: RequestID, request: HTTP2Request)] = []
    var queueHead = 0
    /// Streams with request body left to send, in the order they get turns.
    var sending: [UInt32] = []
    var nextStreamID: UInt32 = 1
    /// What the server's connection window lets us send.
    var sendWindow = HTTP2Settings.defaultWindowSize
    /// What we let the server send on the connection before our next WINDOW_UPDATE.
    var receiveWindow = HTTP2Settings.defaultWindowSize
    /// DATA octets received on the connection, not yet given back.
    var connectionUnacknowledged = 0
    /// A HEADERS or PUSH_PROMISE whose field block continues in CONTINUATION frames.
    var openFieldBlock: (streamID: UInt32, endStream: Bool, octets: [UInt8])?
    /// The opaque value of our PING not yet acknowledged.
    var pingAwaited: UInt64?
    /// Streams we reset (RST_STREAM sent), on which the server may still send anything that
    /// was under way: ignored, unlike on streams the server closed (§5.1). At most
    /// `maxRememberedResets`, oldest first from `resetOrderHead`; IDs forgotten are at most
    /// `forgottenResetsThrough`, and frames on a closed stream up to it are ignored too.
    var resetStreams: Set<UInt32> = []
    var resetOrder: [UInt32] = []
    var resetOrderHead = 0
    var forgottenResetsThrough: UInt32 = 0
    static let maxRememberedResets = 1024
    /// Octets handed out in `.write` actions so far (the preface included).
    var octetsWritten: UInt64 = 0
    /// Where each acknowledgement not yet reported written ends, in `octetsWritten` terms,
    /// oldest first from `unwrittenAcksHead`.
    var unwrittenAcks: [UInt64] = []
    var unwrittenAcksHead = 0
    /// What this call writes and answers, handed over by `takeActions`.
    var output: [UInt8] = []
    var actions: [Action] = []

    public init(settings: Settings = Settings()) {
        var settings = settings
        settings.initialWindowSize = min(
            max(settings.initialWindowSize, HTTP2Settings.defaultWindowSize), HTTP2Settings.maxWindowSize)
        settings.connectionWindowSize = min(
            max(settings.connectionWindowSize, HTTP2Settings.defaultWindowSize), HTTP2Settings.maxWindowSize)
        settings.headerTableSize = max(settings.headerTableSize, 4096)
        settings.maxUnwrittenAcks = max(settings.maxUnwrittenAcks, 1)
        settings.maxFrameSize = min(max(settings.maxFrameSize, HTTP2Settings.defaultMaxFrameSize), (1 << 24) - 1)
        self.settings = settings
        parser = HTTP2FrameParser(maxFrameSize: settings.maxFrameSize)
        decoder = HPACKDecoder(maxTableSize: settings.headerTableSize, maxHeaderListSize: settings.maxHeaderListSize)
    }

    // MARK: - Queries

    /// Streams open now.
    public var openStreams: Int { streams.count }
    /// Requests waiting for a stream.
    public var queuedRequests: Int { queue.count - queueHead }
    /// Octets received and not yet parsed into frames: at most one frame header, one frame of
    /// `settings.maxFrameSize` and the last chunk received.
    public var bufferedInput: Int { parser.bufferedCount }
    /// Response body octets held for open streams.
    public var bufferedResponseBodies: Int { streams.values.reduce(0) { $0 + $1.responseBody.count } }
    /// Whether a request sent now can still start on this connection (not after GOAWAY, a
    /// close, or when stream identifiers ran out).
    public var isAcceptingRequests: Bool {
        switch state {
        case .idle, .awaitingSettings, .open: nextStreamID <= UInt32(Int32.max)
        case .goingAway, .closed: false
        }
    }
    /// Streams that may open now, by both sides' limits (0 before the server's SETTINGS).
    public var availableStreams: Int {
        guard state == .open, nextStreamID <= UInt32(Int32.max) else { return 0 }
        let limit = min(settings.maxConcurrentStreams, peerSettings.maxConcurrentStreams ?? Int.max)
        return max(0, limit - streams.count)
    }

    // MARK: - Inputs

    /// The connection preface: the magic octets, our SETTINGS, a WINDOW_UPDATE for the
    /// connection's receive window (§3.4, §6.9.2).
    public mutating func start() -> [Action] {
        precondition(state == .idle, "a connection starts once")
        output.append(contentsOf: HTTP2.clientPreface)
        var ours = [
            HTTP2Setting(.enablePush, 0), HTTP2Setting(.initialWindowSize, UInt32(settings.initialWindowSize)),
            HTTP2Setting(.maxHeaderListSize, UInt32(settings.maxHeaderListSize)),
        ]
        if settings.headerTableSize != 4096 {
            ours.append(HTTP2Setting(.headerTableSize, UInt32(settings.headerTableSize)))
        }
        if settings.maxFrameSize != HTTP2Settings.defaultMaxFrameSize {
            ours.append(HTTP2Setting(.maxFrameSize, UInt32(settings.maxFrameSize)))
        }
        HTTP2FrameWriter.write(HTTP2Frame(streamID: 0, .settings(ours, ack: false)), into: &output)
        let raise = settings.connectionWindowSize - receiveWindow
        if raise > 0 {
            HTTP2FrameWriter.write(HTTP2Frame(streamID: 0, .windowUpdate(increment: UInt32(raise))), into: &output)
            receiveWindow += raise
        }
        state = .awaitingSettings
        return takeActions()
    }

    /// Sends `request` when a stream is free (at once if one is), its body as the windows
    /// allow. After GOAWAY or close it fails at once as not sent.
    public mutating func send(request: HTTP2Request, id: RequestID) -> [Action] {
        guard isAcceptingRequests else {
            let why = state == .closed ? "the connection is closed" : "the connection takes no new streams"
            return [.failed(id, .notSent(why))]
        }
        queue.append((id, request))
        startQueued()
        return takeActions()
    }

    /// Forgets `id` without answering it: a waiting request is dropped, an open stream reset
    /// with CANCEL.
    public mutating func cancel(_ id: RequestID) -> [Action] {
        if let streamID = streamOfRequest.removeValue(forKey: id) {
            streams[streamID] = nil
            writeReset(streamID, .cancel)
        } else if let index = queue[queueHead...].firstIndex(where: { $0.id == id }) {
            queue.remove(at: index)
        }
        startQueued()
        return takeActions()
    }

    /// Sends a PING carrying `now`; `.pingAcked` comes when the server answers it (§6.7).
    public mutating func ping(now: UInt64) -> [Action] {
        guard state != .idle, state != .closed else { return [] }
        pingAwaited = now
        HTTP2FrameWriter.write(HTTP2Frame(streamID: 0, .ping(opaque: now, ack: false)), into: &output)
        return takeActions()
    }

    /// The caller wrote the connection's octets up to `octets` (counted from the preface's
    /// first): acknowledgements among them no longer count against `maxUnwrittenAcks`.
    public mutating func written(through octets: UInt64) {
        while unwrittenAcksHead < unwrittenAcks.count, unwrittenAcks[unwrittenAcksHead] <= octets {
            unwrittenAcksHead += 1
        }
        if unwrittenAcksHead == unwrittenAcks.count {
            unwrittenAcks.removeAll(keepingCapacity: true)
            unwrittenAcksHead = 0
        } else if unwrittenAcksHead > 1024, unwrittenAcksHead > unwrittenAcks.count / 2 {
            unwrittenAcks.removeFirst(unwrittenAcksHead)
            unwrittenAcksHead = 0
        }
    }

    /// Ends the connection from our side: GOAWAY (NO_ERROR), open requests fail (they may have
    /// been processed), waiting ones fail as not sent.
    public mutating func close() -> [Action] {
        guard state != .closed else { return [] }
        if state != .idle {
            HTTP2FrameWriter.write(
                HTTP2Frame(streamID: 0, .goAway(lastStreamID: 0, error: .noError, debugData: [])), into: &output)
        }
        failEverything(because: "the connection was closed")
        state = .closed
        return takeActions()
    }

    // MARK: - Sending

    /// Opens streams for waiting requests as far as the limits allow, then sends body.
    mutating func startQueued() {
        var available = availableStreams
        while available > 0, queueHead < queue.count {
            let (id, request) = queue[queueHead]
            queueHead += 1
            open(request, id: id)
            available -= 1
        }
        if queueHead == queue.count {
            queue.removeAll(keepingCapacity: true)
            queueHead = 0
        } else if queueHead > 1024 && queueHead > queue.count / 2 {
            queue.removeFirst(queueHead)
            queueHead = 0
        }
        sendBodies()
    }

    private mutating func open(_ request: HTTP2Request, id: RequestID) {
        let streamID = nextStreamID
        nextStreamID += 2
        var block: [UInt8] = []
        encoder.encode(request.fieldList, into: &block)
        HTTP2FrameWriter.writeFieldBlock(
            block, streamID: streamID, endStream: request.body.isEmpty, maxFrameSize: peerSettings.maxFrameSize,
            into: &output)
        streams[streamID] = HTTP2ClientStream(
            requestID: id, request: request, sendWindow: peerSettings.initialWindowSize,
            receiveWindow: settings.initialWindowSize)
        streamOfRequest[id] = streamID
        if !request.body.isEmpty { sending.append(streamID) }
    }

    /// Sends DATA for streams with body left, one frame per stream per round, as long as the
    /// connection's window and each stream's allow (§6.9.1).
    mutating func sendBodies() {
        while sendWindow > 0, !sending.isEmpty {
            var stillSending: [UInt32] = []
            var progressed = false
            for streamID in sending where streams[streamID]?.isRequestDone == false {
                let stream = streams[streamID]!
                let chunk = min(stream.remainingBody, stream.sendWindow, sendWindow, peerSettings.maxFrameSize)
                if chunk > 0 {
                    let end = stream.bodySent + chunk
                    let isLast = end == stream.body.count
                    HTTP2FrameWriter.writeData(
                        stream.body[stream.bodySent..<end], streamID: streamID, endStream: isLast, into: &output)
                    streams[streamID]!.bodySent = end
                    streams[streamID]!.sendWindow -= chunk
                    streams[streamID]!.isRequestDone = isLast
                    sendWindow -= chunk
                    progressed = true
                }
                if streams[streamID]!.isRequestDone == false { stillSending.append(streamID) }
            }
            sending = stillSending
            if !progressed { break }
        }
    }

    // MARK: - Ending

    /// Fails every open request as possibly processed and every waiting one as not sent.
    mutating func failEverything(because reason: String) {
        for streamID in streams.keys.sorted() {
            actions.append(.failed(streams[streamID]!.requestID, .connectionEnded(reason)))
        }
        for (id, _) in queue[queueHead...] { actions.append(.failed(id, .notSent(reason))) }
        streams.removeAll()
        streamOfRequest.removeAll()
        queue.removeAll()
        queueHead = 0
        sending.removeAll()
        openFieldBlock = nil
    }

    /// A connection error (§5.4.1): GOAWAY with its code and description, every request failed.
    mutating func fail(with error: HTTP2ProtocolError) {
        guard state != .closed else { return }
        let debug = Array(error.description.utf8.prefix(256))
        HTTP2FrameWriter.write(
            HTTP2Frame(streamID: 0, .goAway(lastStreamID: 0, error: error.code, debugData: debug)), into: &output)
        failEverything(because: error.description)
        actions.append(.connectionError(error))
        state = .closed
    }

    /// Writes RST_STREAM with `code` on `streamID` and remembers that we reset it.
    mutating func writeReset(_ streamID: UInt32, _ code: HTTP2ErrorCode) {
        HTTP2FrameWriter.write(HTTP2Frame(streamID: streamID, .rstStream(code)), into: &output)
        guard resetStreams.insert(streamID).inserted else { return }
        resetOrder.append(streamID)
        if resetOrder.count - resetOrderHead > Self.maxRememberedResets {
            let forgotten = resetOrder[resetOrderHead]
            resetOrderHead += 1
            resetStreams.remove(forgotten)
            forgottenResetsThrough = max(forgottenResetsThrough, forgotten)
            if resetOrderHead > Self.maxRememberedResets {
                resetOrder.removeFirst(resetOrderHead)
                resetOrderHead = 0
            }
        }
    }

    /// Whether we reset the closed stream `streamID` (or may have: it is among the forgotten).
    func wasReset(_ streamID: UInt32) -> Bool {
        streamID <= forgottenResetsThrough || resetStreams.contains(streamID)
    }

    /// Writes a SETTINGS or PING acknowledgement, unless too many wait to be written already.
    /// - Throws: `.acknowledgementFlood` past `settings.maxUnwrittenAcks`.
    mutating func writeAcknowledgement(_ frame: HTTP2Frame) throws(HTTP2ProtocolError) {
        guard unwrittenAcks.count - unwrittenAcksHead < settings.maxUnwrittenAcks else {
            throw .acknowledgementFlood(limit: settings.maxUnwrittenAcks)
        }
        HTTP2FrameWriter.write(frame, into: &output)
        unwrittenAcks.append(octetsWritten + UInt64(output.count))
    }

    /// This call's actions: one write of everything it wrote, first, then the others in order.
    mutating func takeActions() -> [Action] {
        var result: [Action] = []
        if !output.isEmpty {
            octetsWritten += UInt64(output.count)
            result.append(.write(output))
            output = []
        }
        if !actions.isEmpty {
            result.append(contentsOf: actions)
            actions.removeAll()
        }
        return result
    }
}
