import HTTP1

/// How one outbound HTTP/1.1 request ended.
enum HTTP1Outcome {
    case response(HTTP1Response)
    /// No (complete) response: why, for logs and delivery records.
    case failed(String)
}

/// Sends HTTP/1.1 requests for the control plane (JWKS fetches, webhook deliveries: DESIGN
/// §18): `HTTP1Client`, or a test's scripted peer. Called on the control plane's thread only.
protocol HTTPFetching: AnyObject {
    /// Sends `request` to `origin`; `done` is called exactly once, on the same thread, within
    /// `timeout` nanoseconds of `now` (a request without a response by then fails).
    func send(
        _ request: HTTP1Request, to origin: HTTPOrigin, timeout: UInt64, now: UInt64,
        done: @escaping (HTTP1Outcome) -> Void)
}
