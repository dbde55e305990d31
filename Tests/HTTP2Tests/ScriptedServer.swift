@testable import HTTP2

/// The server side of a scripted conversation with an `HTTP2ClientConnection`: it reads what
/// the client wrote (frames, field blocks decoded) and writes frames for the client to receive.
struct ScriptedServer {
    var connection: HTTP2ClientConnection
    private var parser = HTTP2FrameParser(maxFrameSize: 1 << 24 - 1)
    private var decoder = HPACKDecoder()
    private var encoder = HPACKEncoder()
    private var sawPreface = false
    private var inbound: [UInt8] = []
    /// Everything but writes, from every call so far.
    var events: [HTTP2ClientConnection.Action] = []
    /// The frames the client wrote and the server has not looked at yet.
    var written: [HTTP2Frame] = []

    init(settings: HTTP2ClientConnection.Settings = .init()) {
        connection = HTTP2ClientConnection(settings: settings)
        take(connection.start())
    }

    /// A started connection that has the server's SETTINGS (`serverSettings`) and acknowledged them.
    static func open(
        _ serverSettings: [HTTP2Setting] = [], settings: HTTP2ClientConnection.Settings = .init()
    ) -> ScriptedServer {
        var server = ScriptedServer(settings: settings)
        server.send(HTTP2Frame(streamID: 0, .settings(serverSettings, ack: false)))
        server.written.removeAll()
        return server
    }

    mutating func take(_ actions: [HTTP2ClientConnection.Action]) {
        for action in actions {
            guard case .write(let octets) = action else {
                events.append(action)
                continue
            }
            var bytes = octets[...]
            if !sawPreface {
                precondition(bytes.starts(with: HTTP2.clientPreface), "the client begins with the preface")
                bytes = bytes.dropFirst(HTTP2.clientPreface.count)
                sawPreface = true
            }
            parser.append(bytes)
            while let frame = try! parser.next() {
                written.append(frame)
                decodeFieldBlock(frame)
            }
        }
    }

    /// Sends `frames` to the client as one read.
    mutating func send(_ frames: HTTP2Frame...) {
        var bytes: [UInt8] = []
        for frame in frames { HTTP2FrameWriter.write(frame, into: &bytes) }
        receive(bytes)
    }

    /// Sends raw octets to the client.
    mutating func receive(_ bytes: [UInt8]) { take(connection.received(bytes)) }

    /// A field block of `fields`, encoded with the server's HPACK state.
    mutating func block(_ fields: [HeaderField]) -> [UInt8] {
        var out: [UInt8] = []
        encoder.encode(fields, into: &out)
        return out
    }

    /// A HEADERS frame with the response head `status` plus `fields`.
    mutating func headers(
        _ stream: UInt32, status: Int = 200, _ fields: [HeaderField] = [], endStream: Bool = false
    ) -> HTTP2Frame {
        HTTP2Frame(
            streamID: stream,
            .headers(
                fragment: block([HeaderField(":status", String(status))] + fields), endStream: endStream,
                endHeaders: true))
    }

    mutating func sendRequest(_ id: UInt64, _ request: HTTP2Request = ScriptedServer.request()) {
        take(connection.send(request: request, id: RequestID(id)))
    }

    static func request(body: [UInt8] = [], path: String = "/3/device/abc") -> HTTP2Request {
        HTTP2Request(authority: "api.push.example", path: path, headers: [HeaderField("apns-topic", "t")], body: body)
    }

    /// Takes the frames written so far.
    mutating func takeWritten() -> [HTTP2Frame] {
        heads.removeAll()
        defer { written.removeAll() }
        return written
    }

    /// Field blocks the client wrote, decoded as they come (HPACK's state is the connection's).
    private var heads: [(UInt32, [HeaderField])] = []
    private var openBlock: (UInt32, [UInt8])?

    private mutating func decodeFieldBlock(_ frame: HTTP2Frame) {
        switch frame.payload {
        case .headers(let fragment, _, let endHeaders, _, _):
            openBlock = (frame.streamID, fragment)
            if !endHeaders { return }
        case .continuation(let fragment, let endHeaders):
            openBlock!.1 += fragment
            if !endHeaders { return }
        default:
            return
        }
        heads.append((openBlock!.0, try! decoder.decode(openBlock!.1)))
        openBlock = nil
    }

    /// The request heads written since the last call (stream → fields); frames are taken too.
    mutating func takeRequestHeads() -> [(UInt32, [HeaderField])] {
        written.removeAll()
        defer { heads.removeAll() }
        return heads
    }

    /// DATA octets written per stream, and whether END_STREAM came.
    static func dataSent(_ frames: [HTTP2Frame]) -> [UInt32: (octets: Int, ended: Bool)] {
        var sent: [UInt32: (octets: Int, ended: Bool)] = [:]
        for frame in frames {
            guard case .data(let body, let endStream, _) = frame.payload else { continue }
            sent[frame.streamID, default: (0, false)].octets += body.count
            if endStream { sent[frame.streamID]!.ended = true }
        }
        return sent
    }

    mutating func takeEvents() -> [HTTP2ClientConnection.Action] {
        defer { events.removeAll() }
        return events
    }
}
