/// Answers one admin request — now, or later once its mutation is durable or its scatter-gather
/// complete. Invariant: at most one response is sent; later calls do nothing.
final class AdminReply {
    private var send: ((Response) -> Void)?

    init(_ send: @escaping (Response) -> Void) { self.send = send }

    func callAsFunction(_ response: Response) {
        send?(response)
        send = nil
    }

    /// A JSON answer.
    func json(_ status: Int, _ value: JSONValue) { self(.json(status, JSONWriter.string(value))) }

    func error(_ error: AdminError) { self(error.response) }
}
