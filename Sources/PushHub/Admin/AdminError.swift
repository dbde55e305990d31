/// An operator's request the hub refuses: the status and a message that says what to fix
/// (DESIGN §7: 400 bad input, 401 auth, 404, 409, 413, 422 semantic, 503 draining).
public struct AdminError: Error, Sendable {
    public var status: Int
    public var code: String
    public var message: String

    public init(_ status: Int, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var response: Response { .error(status, code: code, message: message) }

    static func notFound(_ what: String) -> AdminError { AdminError(404, "not_found", what) }

    static func badJSON(_ error: JSONError) -> AdminError { AdminError(400, "bad_json", error.description) }
}

extension AdminError {
    /// Bad input found by a domain parser: 400 with its code and sentence.
    init(_ error: InputError) { self.init(400, error.code, error.message) }
}
