/// How admin requests reach the control plane: each runs on its loop, reads see only durable
/// state, and a change that lost the race for the shared journal's next entry runs again.
extension ControlPlane {
    /// Runs `body` once everything mutated so far is durable (at once when nothing is pending), so
    /// that a read of `committed` then shows every change made before it, and never what a failed
    /// or lost batch takes back. (`state` may by then hold changes made after this call, which wait
    /// for the next batch: reads use `committed`, `AdminCall.state`.)
    func afterCommit(_ body: @escaping () -> Void) {
        if uncommittedIsEmpty {
            body()
        } else {
            mutate([], retry: nil) { _ in body() }
        }
    }

    /// Makes `records` durable, then answers `status` (200, or 201 for what it created) with
    /// `answer` of the loops' answers (when `gathering`), or the failure. A lost race makes the
    /// request again (`reply.retry`).
    func commit(
        _ records: [HubRecord], gathering: Bool = false, status: Int = 200, reply: AdminReply,
        answer: @escaping ([LoopAnswer]) -> JSONValue
    ) {
        mutate(records, gathering: gathering, retry: reply.retry) { result in
            switch result {
            case .failure(let error): reply.error(error)
            case .success(let answers): reply.json(status, answer(answers))
            }
        }
    }

    /// Serves one admin request (DESIGN §7); `reply` answers now or later.
    /// - Parameter attempt: scaled out, how many times the request's batch lost the race for the
    ///   next journal entry to another hub's; it runs again against the new state each time.
    func handle(_ head: RequestHead, body: [UInt8], reply: AdminReply, attempt: Int = 0) {
        guard attempt <= Self.maxAttempts else {
            return reply.error(
                AdminError(
                    503, "contention",
                    "other hubs changed the shared state \(Self.maxAttempts) times while this request was made; retry"))
        }
        let again = { [unowned self] in self.handle(head, body: body, reply: reply, attempt: attempt + 1) }
        let request = AdminReply(reply.callAsFunction, retry: again)
        AdminAPI(plane: self).handle(head, body: body, reply: request)
    }

    /// A request loses a race only to another hub's batch that won it, so some hub makes progress
    /// every round; with three hubs writing flat out a request loses about 2 rounds in 3, and 64
    /// in a row about once in 10¹¹ requests.
    static let maxAttempts = 64
}
