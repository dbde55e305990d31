import WSProtocol

/// An HTTP/1.1 response, serialized whole (heads and bodies here are small).
///
/// Invariant: `Content-Length` matches `body` (and is absent on 204 and 304, whose bodies are
/// empty); `Connection: close` is set when the connection will not be reused.
public struct Response: Sendable {
    public var status: Int
    public var headers: HeaderFields
    public var body: [UInt8]
    /// The `code` of an `error` response (what the audit log records; never serialized apart
    /// from the body).
    public var errorCode: String?

    public init(status: Int, headers: HeaderFields = HeaderFields(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON body response.
    public static func json(_ status: Int, _ body: String) -> Response {
        var headers = HeaderFields()
        headers.append(name: "Content-Type", value: "application/json")
        return Response(status: status, headers: headers, body: Array(body.utf8))
    }

    /// The contract's error shape: `{"error":{"code":…,"message":…}}` (DESIGN §7).
    public static func error(_ status: Int, code: String, message: String) -> Response {
        var response = json(
            status, #"{"error":{"code":\#(JSONString.quoted(code)),"message":\#(JSONString.quoted(message))}}"#)
        response.errorCode = code
        return response
    }

    /// The same with more members in the error object.
    public static func error(_ status: Int, code: String, message: String, details: JSONObject) -> Response {
        var members = details
        members["code"] = .string(code)
        members["message"] = .string(message)
        var response = json(status, JSONWriter.string(.object(["error": .object(members)])))
        response.errorCode = code
        return response
    }

    /// A plain-text refusal with a one-line reason, for the client port.
    public static func plain(_ status: Int, _ reason: String, headers extra: HeaderFields = HeaderFields()) -> Response
    {
        var headers = extra
        headers.append(name: "Content-Type", value: "text/plain; charset=utf-8")
        return Response(status: status, headers: headers, body: Array((reason + "\n").utf8))
    }

    public func serialized(keepAlive: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n"
        for field in headers { head += "\(field.name): \(field.value)\r\n" }
        // RFC 9110 §8.6: no Content-Length on a 204, nor on a 304 (which would have to repeat the
        // 200's).
        if status != 204 && status != 304 { head += "Content-Length: \(body.count)\r\n" }
        if !keepAlive { head += "Connection: close\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 422: "Unprocessable Content"
        case 426: "Upgrade Required"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status"
        }
    }
}
