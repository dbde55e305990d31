/// Why the peer broke RFC 9113 so that the connection must end (a connection error, §5.4.1):
/// the client sends GOAWAY with `code` and fails every open request. Some of these the RFC
/// allows as stream errors; §5.4.1 lets an endpoint treat a stream error as a connection error,
/// and a peer that breaks framing has lost our trust for the whole connection.
public enum HTTP2ProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A frame longer than our SETTINGS_MAX_FRAME_SIZE (§4.2).
    case frameTooLarge(type: UInt8, length: Int, limit: Int)
    /// A frame whose payload cannot hold its fixed fields, or has a fixed length and another one.
    case badFrameLength(HTTP2FrameType, length: Int)
    /// A frame that belongs to a stream arrived on stream 0.
    case missingStreamID(HTTP2FrameType)
    /// A frame that belongs to the connection arrived on a stream.
    case unexpectedStreamID(HTTP2FrameType, streamID: UInt32)
    /// The pad length is not less than the payload it pads (§6.1).
    case paddingTooLong(HTTP2FrameType, padLength: Int, length: Int)
    /// A SETTINGS value out of its range (§6.5.2).
    case badSettingValue(HTTP2Setting)
    /// The server's preface did not start with SETTINGS (§3.4).
    case prefaceNotSettings(type: UInt8)
    /// We disabled push (SETTINGS_ENABLE_PUSH=0), so PUSH_PROMISE is a PROTOCOL_ERROR (§8.4).
    case pushPromiseReceived(streamID: UInt32)
    /// A field block was open on `streamID`, and a frame other than its CONTINUATION came (§6.10).
    case continuationExpected(streamID: UInt32, type: UInt8)
    /// A CONTINUATION with no field block open on its stream (§6.10).
    case unexpectedContinuation(streamID: UInt32)
    /// A field block (HEADERS and CONTINUATION octets) longer than we hold.
    case fieldBlockTooLarge(length: Int, limit: Int)
    /// HPACK could not decode a field block: the shared table is lost (§4.3).
    case fieldBlockUndecodable(HPACKError)
    /// A frame on a stream we never opened (§5.1: "idle"), or a server-initiated one.
    case frameOnIdleStream(HTTP2FrameType, streamID: UInt32)
    /// DATA or HEADERS on a stream the server closed with END_STREAM or RST_STREAM (§5.1:
    /// "closed"; after RST_STREAM the RFC asks for a stream error, which §5.4.1 lets us raise to
    /// a connection error).
    case frameOnClosedStream(HTTP2FrameType, streamID: UInt32)
    /// The server's SETTINGS_ENABLE_PUSH was 1, which only a client may send (§6.5.2).
    case serverEnabledPush
    /// The server made us acknowledge (SETTINGS, PING) more than `limit` times with none of the
    /// acknowledgements written yet: a flood (CVE-2019-9512, -9515), ended as nghttp2 does.
    case acknowledgementFlood(limit: Int)
    /// WINDOW_UPDATE of 0 on the connection (§6.9).
    case zeroWindowIncrement
    /// The connection's send window, or a stream's after a SETTINGS_INITIAL_WINDOW_SIZE change,
    /// would pass 2³¹−1 (§6.9.1, §6.9.2).
    case windowOverflow(streamID: UInt32)
    /// The peer sent more DATA than a receive window we gave it allows (§6.9.1).
    case flowControlOverrun(streamID: UInt32, length: Int, window: Int)

    /// The GOAWAY code that reports it.
    public var code: HTTP2ErrorCode {
        switch self {
        case .frameTooLarge, .badFrameLength: .frameSizeError
        case .badSettingValue(let setting):
            setting.identifier == .initialWindowSize ? .flowControlError : .protocolError
        case .fieldBlockTooLarge, .acknowledgementFlood: .enhanceYourCalm
        case .frameOnClosedStream: .streamClosed
        case .fieldBlockUndecodable: .compressionError
        case .windowOverflow, .flowControlOverrun: .flowControlError
        case .missingStreamID, .unexpectedStreamID, .paddingTooLong, .prefaceNotSettings, .pushPromiseReceived,
            .continuationExpected, .unexpectedContinuation, .frameOnIdleStream, .zeroWindowIncrement,
            .serverEnabledPush:
            .protocolError
        }
    }

    public var description: String {
        let what: String
        switch self {
        case .frameTooLarge(let type, let length, let limit):
            what = "a \(Self.name(type)) frame of \(length) octets; at most \(limit) (SETTINGS_MAX_FRAME_SIZE)"
        case .badFrameLength(let type, let length): what = "a \(type) frame cannot be \(length) octets long"
        case .missingStreamID(let type): what = "a \(type) frame on stream 0; it belongs to a stream"
        case .unexpectedStreamID(let type, let id): what = "a \(type) frame on stream \(id); it belongs to stream 0"
        case .paddingTooLong(let type, let padLength, let length):
            what = "a \(type) frame of \(length) octets with \(padLength) octets of padding"
        case .badSettingValue(let setting): what = "SETTINGS with \(setting), out of range"
        case .prefaceNotSettings(let type): what = "the server began with \(Self.name(type)), not SETTINGS"
        case .pushPromiseReceived(let id): what = "PUSH_PROMISE on stream \(id), but push is disabled"
        case .continuationExpected(let id, let type):
            what = "\(Self.name(type)) in the middle of stream \(id)'s field block; only CONTINUATION may come"
        case .unexpectedContinuation(let id): what = "CONTINUATION on stream \(id), where no field block is open"
        case .fieldBlockTooLarge(let length, let limit): what = "a field block of \(length) octets; at most \(limit)"
        case .fieldBlockUndecodable(let error): what = "a field block HPACK cannot decode: \(error)"
        case .frameOnIdleStream(let type, let id): what = "\(type) on stream \(id), which was never opened"
        case .frameOnClosedStream(let type, let id): what = "\(type) on stream \(id), which the server closed"
        case .serverEnabledPush: what = "the server's SETTINGS has SETTINGS_ENABLE_PUSH=1; only a client may send it"
        case .acknowledgementFlood(let limit):
            what = "more than \(limit) SETTINGS and PING acknowledgements wait to be written (a flood)"
        case .zeroWindowIncrement: what = "WINDOW_UPDATE of 0 on the connection"
        case .windowOverflow(let id):
            what = "the flow-control window of \(id == 0 ? "the connection" : "stream \(id)") would pass 2^31-1"
        case .flowControlOverrun(let id, let length, let window):
            what =
                "\(length) octets of DATA on \(id == 0 ? "the connection" : "stream \(id)"), whose window is \(window)"
        }
        return "HTTP/2 \(code): \(what)"
    }

    private static func name(_ type: UInt8) -> String {
        HTTP2FrameType(rawValue: type)?.description ?? "frame type 0x" + String(type, radix: 16)
    }
}
