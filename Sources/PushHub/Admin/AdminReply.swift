/// Answers one admin request — now, or later once its mutation is durable or its scatter-gather
/// complete. Invariant: at most one response is sent; later calls do nothing.
final class AdminReply {
    private var send: ((Response) -> Void)?
    /// How to make the request again from the start (scaled out, when its change lost the race for
    /// the shared journal's next entry); nil: it cannot be.
    let retry: (() -> Void)?

    init(_ send: @escaping (Response) -> Void, retry: (() -> Void)? = nil) {
        self.send = send
        self.retry = retry
    }

    func callAsFunction(_ response: Response) {
        send?(response)
        send = nil
    }

    /// A JSON answer.
    func json(_ status: Int, _ value: JSONValue) { self(.json(status, JSONWriter.string(value))) }

    func error(_ error: AdminError) { self(error.response) }
}
