/// An operator's request the hub refuses: the status and a message that says what to fix
/// (DESIGN §7: 400 bad input, 401 auth, 404, 409, 413, 422 semantic, 503 draining).
public struct AdminError: Error, Sendable {
    public var status: Int
    public var code: String
    public var message: String
    /// For a 405: the methods the route accepts (the `Allow` header, RFC 9110 §15.5.6).
    public var allow: [String] = []
    /// Members the error object carries besides code and message (`problems` of a 422 that lists
    /// every problem).
    public var details: JSONObject = JSONObject()

    public init(_ status: Int, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var response: Response {
        var response =
            details.isEmpty
            ? Response.error(status, code: code, message: message)
            : Response.error(status, code: code, message: message, details: details)
        if !allow.isEmpty { response.headers.append(name: "Allow", value: allow.joined(separator: ", ")) }
        return response
    }

    static func notFound(_ what: String) -> AdminError { AdminError(404, "not_found", what) }

    /// 405 with `Allow`: `path` accepts only `methods`.
    static func methodNotAllowed(_ head: RequestHead, accepts methods: [String]) -> AdminError {
        var error = AdminError(
            405, "method_not_allowed", "\(head.path) accepts \(methods.joined(separator: ", ")), not \(head.method)")
        error.allow = methods
        return error
    }

    static func badJSON(_ error: JSONError) -> AdminError { AdminError(400, "bad_json", error.description) }
}

extension AdminError {
    /// Bad input found by a domain parser: 400 with its code and sentence.
    init(_ error: InputError) { self.init(400, error.code, error.message) }

    /// Runs a domain parser, answering its `InputError` as a 400.
    static func mapping<T>(_ parse: () throws(InputError) -> T) throws(AdminError) -> T {
        do {
            return try parse()
        } catch {
            throw AdminError(error)
        }
    }
}
