/// One admin request as its route's handler gets it: what was asked, by whom, and how to answer.
///
/// Invariants (`AdminAPI`): the route's access, query parameters and path variable were checked;
/// a call that only reads runs once everything mutated before it is durable, and reads `state`,
/// the committed state; `reply` is audited and carries the request's `retry`.
struct AdminCall {
    let plane: ControlPlane
    let head: RequestHead
    let body: [UInt8]
    /// The token that passed the route's scope check; nil exactly on an open route.
    let token: AdminToken?
    /// The values of the path's variables (`name` and `id` in `/v1/screens/{name}/releases/{id}`).
    let variables: [String]
    /// The value of the path's first variable (`name` in `/v1/screens/{name}`); "" without one.
    var variable: String { variables.first ?? "" }
    /// Whether the call may change something (the route's `Effect`): false for a read or a dry run.
    let changes: Bool
    let reply: AdminReply

    /// The state the call works on: for a change, the state it is made on (`ControlPlane.state`,
    /// with what earlier changes not yet durable did); for a read or a dry run, the committed state,
    /// so that it never shows what a failed or lost batch would take back.
    var state: HubState { changes ? plane.state : plane.committed }

    /// The first value of query parameter `name`.
    func query(_ name: String) -> String? { head.query.first { $0.name == name }?.value }

    /// `?limit=N`: how many entries a list may show, from 1 to `max` (`value` when not asked).
    func limit(default value: Int, max: Int = .max) throws(AdminError) -> Int {
        guard let text = query("limit") else { return value }
        guard head.query.count(where: { $0.name == "limit" }) == 1 else {
            throw AdminError(400, "bad_limit", "limit is given more than once; give it once")
        }
        guard let limit = Int(text), (1...max).contains(limit) else {
            let range = max == .max ? "of 1 or more" : "from 1 to \(max)"
            throw AdminError(400, "bad_limit", "limit must be a whole number \(range) (got \"\(text)\")")
        }
        return limit
    }

    /// Makes `records` durable, then answers 200 with `answer` (of the loops' answers when
    /// `gathering`); a change that lost the race for the shared journal's next entry is made
    /// again from the start (`reply.retry`).
    func commit(
        _ records: [HubRecord], gathering: Bool = false, status: Int = 200,
        answer: @escaping ([LoopAnswer]) -> JSONValue
    ) {
        plane.commit(records, gathering: gathering, status: status, reply: reply, answer: answer)
    }

    /// Asks every loop `query`, then calls `finish` with the answers once everything mutated
    /// meanwhile is durable.
    func gather(_ query: LoopQuery, finish: @escaping ([LoopAnswer]) -> Void) {
        plane.gather(query, now: MonotonicClock.now()) { [plane] answers, _ in plane.afterCommit { finish(answers) } }
    }

    /// The receipts of the syncs numbered `seqs` (every live hub's, scaled out).
    func gatherReceipts(seqs: [Int], finish: @escaping ([Int: ReceiptCounts]) -> Void) {
        plane.gatherReceipts(seqs: seqs, now: MonotonicClock.now(), finish: finish)
    }
}
