/// Why a request could not be written; the description says which part is wrong.
public enum HTTP1RequestError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The method is not a token (RFC 9110 §9.1).
    case badMethod(String)
    /// The target is not an origin form of visible ASCII starting with `/`.
    case badTarget(String)
    /// A field name is not a token (RFC 9110 §5.1).
    case badFieldName(String)
    /// A field's value holds CR, LF, NUL or another control character (RFC 9110 §5.5): written
    /// out, it would end the field early and let the rest pass for more fields.
    case badFieldValue(name: String)

    public var description: String {
        switch self {
        case .badMethod(let method): "the method \(method.debugDescription) is not a token"
        case .badTarget(let target):
            "the request target \(target.debugDescription) is not /path?query in visible ASCII"
        case .badFieldName(let name): "the header name \(name.debugDescription) is not a token"
        case .badFieldValue(let name): "the value of the header \(name) holds a control character (CR, LF, NUL, …)"
        }
    }
}

/// Writes an `HTTP1Request` as HTTP/1.1 bytes (RFC 9112 §3, §5, §6): the request line, `Host`
/// (the origin's authority, RFC 9112 §3.2), the caller's fields, `User-Agent` when the caller
/// gave none, and `Content-Length` when there is a body or the method defines one (RFC 9110
/// §8.6); never `Transfer-Encoding` or `Connection` (the connection is persistent by default).
///
/// Invariant: what it returns is one well-formed request whose framing a strict server reads
/// the same way (no field it writes can hold CR, LF or NUL); anything else is refused.
public struct HTTP1RequestWriter: Sendable {
    /// Sent when the request has no `User-Agent` of its own.
    public var userAgent: String

    public init(userAgent: String) { self.userAgent = userAgent }

    /// Fields the writer owns: given ones are dropped.
    static let writerFields = ["host", "content-length", "transfer-encoding", "connection"]

    public func write(_ request: HTTP1Request, to origin: HTTPOrigin) throws(HTTP1RequestError) -> [UInt8] {
        guard HTTP1Syntax.isToken(request.method.utf8) else { throw .badMethod(request.method) }
        guard request.target.utf8.first == UInt8(ascii: "/"),
            request.target.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else {
            throw .badTarget(request.target)
        }
        var fields: [(name: String, value: String)] = [("Host", origin.authority)]
        var hasUserAgent = false
        for field in request.headers {
            guard HTTP1Syntax.isToken(field.name.utf8) else { throw .badFieldName(field.name) }
            guard field.value.utf8.allSatisfy(HTTP1Syntax.isFieldValueByte) else {
                throw .badFieldValue(name: field.name)
            }
            let name = field.name.lowercased()
            if Self.writerFields.contains(name) { continue }
            if name == "user-agent" { hasUserAgent = true }
            fields.append(field)
        }
        if !hasUserAgent {
            guard userAgent.utf8.allSatisfy(HTTP1Syntax.isFieldValueByte) else {
                throw .badFieldValue(name: "User-Agent")
            }
            fields.append(("User-Agent", userAgent))
        }
        if !request.body.isEmpty || ["POST", "PUT", "PATCH"].contains(request.method) {
            fields.append(("Content-Length", String(request.body.count)))
        }
        var head = request.method + " " + request.target + " HTTP/1.1\r\n"
        for field in fields { head += field.name + ": " + field.value + "\r\n" }
        head += "\r\n"
        var bytes = Array(head.utf8)
        bytes.reserveCapacity(bytes.count + request.body.count)
        bytes += request.body
        return bytes
    }
}
