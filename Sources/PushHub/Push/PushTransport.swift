import HTTP2

/// Where a provider's pushes go: one HTTP/2 connection's worth of requests (`HTTP2Link`), or a
/// test's scripted peer. Called on the control plane's thread only.
protocol PushTransport: AnyObject {
    /// Sends `request`; `done` is called exactly once, on the same thread.
    func send(_ request: HTTP2Request, now: UInt64, done: @escaping (HTTP2LinkOutcome) -> Void)
    /// Requests accepted and not yet answered.
    var waiting: Int { get }
    /// Fails every request not yet answered (each `done` is called) and sends nothing more.
    func close()
}

extension HTTP2Link: PushTransport {}
