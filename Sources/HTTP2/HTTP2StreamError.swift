/// Why one request got no response. `isUnprocessed` says whether the server certainly did not
/// act on it (RFC 9113 §8.7), so that it may be sent again on another stream or connection.
public enum HTTP2StreamError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The server reset the stream with REFUSED_STREAM: not processed.
    case refused
    /// The server's GOAWAY named a last stream below this request's: not processed.
    case goneAway(lastStreamID: UInt32, HTTP2ErrorCode)
    /// The request never left: the connection closed, went away, or ran out of stream
    /// identifiers before it could start. Not processed.
    case notSent(String)
    /// The server reset the stream with another code: it may have acted on the request.
    case reset(HTTP2ErrorCode)
    /// The connection ended while the request was open (a connection error, `close()`): it may
    /// have been acted on.
    case connectionEnded(String)
    /// The response's body passed `maxResponseBody`: the stream was cancelled.
    case responseTooLarge(limit: Int)
    /// The response broke HTTP/2's message rules (§8.1.1, §8.3.2): the stream was reset with
    /// PROTOCOL_ERROR.
    case malformedResponse(String)
    /// The server's WINDOW_UPDATE took the stream's window past 2³¹−1: the stream was reset
    /// with FLOW_CONTROL_ERROR.
    case windowOverflow

    public var isUnprocessed: Bool {
        switch self {
        case .refused, .goneAway, .notSent: true
        case .reset, .connectionEnded, .responseTooLarge, .malformedResponse, .windowOverflow: false
        }
    }

    public var description: String {
        switch self {
        case .refused: "the server refused the stream (REFUSED_STREAM); it did not process the request"
        case .goneAway(let last, let code):
            "the server went away (GOAWAY \(code), last stream \(last)) before processing the request"
        case .notSent(let why): "the request was not sent: \(why)"
        case .reset(let code): "the server reset the stream (\(code))"
        case .connectionEnded(let why): "the connection ended with the request open: \(why)"
        case .responseTooLarge(let limit): "the response body passed \(limit) bytes (maxResponseBody)"
        case .malformedResponse(let why): "the response is malformed: \(why)"
        case .windowOverflow: "the server took the stream's flow-control window past 2^31-1"
        }
    }
}
