/// Why a response could not be read (RFC 9112). Every one ends the exchange: the connection it
/// came on is closed, since the bytes after a message we could not frame cannot be framed either.
public enum HTTP1ResponseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The head (status line and fields, or the trailer section) is longer than the bound.
    case headTooLarge(limit: Int)
    case tooManyFields(limit: Int)
    /// A line ends in LF without CR, or a CR is followed by anything but LF (RFC 9112 §2.2).
    case bareLineEnding
    /// The first line is not `HTTP/1.x NNN reason`; the text (cut short) says what came.
    case badStatusLine(String)
    /// A well-formed version other than HTTP/1.0 and HTTP/1.1.
    case unsupportedVersion(String)
    /// A status code outside 100–599, or 101 Switching Protocols, which the hub never asks for.
    case badStatus(Int)
    /// A field line starts with whitespace (obsolete line folding, RFC 9112 §5.2).
    case obsoleteLineFolding
    /// A field line that is not `name: value` with a token name and no whitespace before the colon.
    case badFieldLine(String)
    /// A field value holds a control character other than HTAB (RFC 9110 §5.5).
    case badFieldValue(name: String)
    /// A Content-Length that is not one decimal number (RFC 9110 §8.6).
    case badContentLength(String)
    /// More than one Content-Length field: even equal ones are refused (RFC 9112 §6.3 allows a
    /// recipient to refuse; strict parsers do).
    case severalContentLengths
    /// Transfer-Encoding and Content-Length together: the framing is ambiguous, and the gap
    /// between two readers' choices is where response smuggling lives (RFC 9112 §6.3, item 3).
    case contentLengthWithTransferEncoding
    /// A transfer coding other than a single `chunked` (the hub asks for none), or one in an
    /// HTTP/1.0 response (RFC 9112 §6.1: faulty framing).
    case unsupportedTransferEncoding(String)
    /// A chunk-size line that is not hex digits and optional extensions (RFC 9112 §7.1).
    case badChunkSize(String)
    /// A chunk size too large to count (more than 15 significant hex digits).
    case chunkSizeOverflow
    /// Chunk data not followed by CRLF.
    case badChunkEnd
    /// The body is longer than the request's bound (`HTTP1Request.maxResponseBodyBytes`).
    case bodyTooLarge(limit: Int)
    /// The server closed the connection before sending a byte.
    case closedWithoutResponse
    /// The server closed the connection in the middle of the head, after `received` bytes.
    case closedInHead(received: Int)
    /// The server closed the connection in the middle of the body: `received` bytes of it came,
    /// `expected` were announced (nil: chunked).
    case closedInBody(received: Int, expected: Int?)

    public var description: String {
        switch self {
        case .headTooLarge(let limit): "the response head is longer than \(limit) bytes"
        case .tooManyFields(let limit): "the response has more than \(limit) header fields"
        case .bareLineEnding: "a line of the response ends in a bare CR or LF, not CRLF"
        case .badStatusLine(let line): "the response does not start with a status line (HTTP/1.1 200 OK): \(line)"
        case .unsupportedVersion(let version): "the response is \(version), not HTTP/1.1 or HTTP/1.0"
        case .badStatus(let status):
            status == 101
                ? "the server switched protocols (101), which was not asked for"
                : "the status code \(status) is not 100–599"
        case .obsoleteLineFolding: "a header line of the response starts with whitespace (obsolete line folding)"
        case .badFieldLine(let line): "a header line of the response is not NAME: VALUE: \(line)"
        case .badFieldValue(let name): "the value of the response header \(name) holds a control character"
        case .badContentLength(let value): "the Content-Length \(value) is not a number of bytes"
        case .severalContentLengths: "the response has more than one Content-Length"
        case .contentLengthWithTransferEncoding:
            "the response has both Content-Length and Transfer-Encoding (ambiguous framing)"
        case .unsupportedTransferEncoding(let coding):
            "the response's Transfer-Encoding \(coding) is not chunked (the only one accepted, and only in HTTP/1.1)"
        case .badChunkSize(let line): "a chunk-size line of the response is not hex digits: \(line)"
        case .chunkSizeOverflow: "a chunk size of the response is too large"
        case .badChunkEnd: "a chunk of the response is not followed by CRLF"
        case .bodyTooLarge(let limit): "the response body is longer than \(limit) bytes"
        case .closedWithoutResponse: "the server closed the connection without answering"
        case .closedInHead(let received):
            "the server closed the connection after \(received) bytes of the response head"
        case .closedInBody(let received, let expected?):
            "the server closed the connection after \(received) of \(expected) bytes of the response body"
        case .closedInBody(let received, nil):
            "the server closed the connection after \(received) bytes of the chunked response body"
        }
    }

    /// Up to 64 bytes of `bytes` for an error: control characters escaped, cut with "…".
    static func excerpt(_ bytes: some Collection<UInt8>) -> String {
        let shown = String(decoding: bytes.prefix(64), as: UTF8.self).debugDescription
        return bytes.count > 64 ? shown + "…" : shown
    }
}
