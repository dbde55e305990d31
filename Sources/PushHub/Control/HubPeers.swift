/// The other hubs serving the same state (scaled out, DESIGN §11): the control plane asks their
/// loops what it asks its own (`ControlPlane.gather`) and answers theirs. `ClusterPeers` speaks
/// to them over Redis; a lone hub has none.
///
/// Order: `expectLive` learns which hubs are live after everything sent before it (the question,
/// or the entry they answer about) went out, so every hub live then is waited for.
protocol HubPeers: AnyObject {
    /// Whether questions can reach the other hubs now.
    var isReachable: Bool { get }
    /// Sends `question` to every other hub; their answers come back through `onAnswers`.
    func ask(_ question: HubQuestion, gather: GatherID, now: UInt64)
    /// Learns the other hubs live now and gives them to `then` (the last known list when the
    /// question fails).
    func expectLive(now: UInt64, then: @escaping (Set<String>) -> Void)
    /// Answers another hub's question.
    func answer(_ asker: RemoteAsker, _ answers: [LoopAnswer], now: UInt64)
    /// Another hub's question to this one.
    var onQuestion: ((RemoteAsker, HubQuestion) -> Void)? { get set }
    /// Another hub's answers to one of this hub's gathers: hub, gather, answers.
    var onAnswers: ((String, GatherID, [LoopAnswer]) -> Void)? { get set }
    /// The latest start among the live hubs (Unix milliseconds; nil: none known): counts each hub
    /// keeps in memory are whole only since then.
    var latestStart: Int? { get }
    /// Whether this hub does the work the cluster does once (webhook deliveries): it holds the
    /// registry's deliverer lease (`HubRegistry`), which one hub at a time holds on Redis's
    /// clock. A holder that cannot renew stops a second before its lease ends there; clocks
    /// that drift more than that could overlap two hubs briefly, which deliveries bear (they
    /// are at least once).
    var leadsSharedWork: Bool { get }
    func tick(now: UInt64)
    var nextDeadline: UInt64 { get }
    /// This hub leaves (a clean stop).
    func leave(now: UInt64)
}
