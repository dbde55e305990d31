/// How the control plane reaches the client loops and the other hubs (DESIGN §9, §11): it posts
/// each change to every loop, asks every loop (and every other live hub) a question, and gathers
/// the answers (`Gather`, `GatherBook`). It also answers the other hubs' questions.
///
/// Invariants: every loop gets every change, in the order `broadcast` is called; a gather
/// finishes exactly once — when every loop and every hub it awaits has answered, or at its
/// deadline with what arrived.
final class Scatter {
    /// The client loops' mailboxes; set once before any loop runs.
    private var loops: [Mailbox] = []
    let peers: (any HubPeers)?
    private let gathers = GatherBook()
    /// This hub's receipts of the syncs asked about (for another hub's question).
    private let localReceipts: ([Int]) -> [Int: ReceiptCounts]
    /// How long a scatter-gather waits for a loop before answering with what it has.
    static let timeout: UInt64 = 2_000_000_000

    init(peers: (any HubPeers)?, localReceipts: @escaping ([Int]) -> [Int: ReceiptCounts]) {
        self.peers = peers
        self.localReceipts = localReceipts
        peers?.onQuestion = { [unowned self] asker, question in self.answer(question, for: asker) }
        peers?.onAnswers = { [unowned self] hub, id, answers in self.gathers.add(answers, from: hub, to: id) }
    }

    func attach(loops mailboxes: [Mailbox]) { loops = mailboxes }

    /// Posts `change` to every loop; with `reply`, each answers that gather.
    func broadcast(_ change: HubChange, reply: GatherID?) {
        for mailbox in loops { mailbox.post(.change(change, reply: reply)) }
    }

    /// Asks every client loop `query` — and every other live hub's loops; `finish` gets the
    /// answers (all of them, unless a loop or hub did not answer within `timeout`: then
    /// `complete` is false).
    func gather(_ query: LoopQuery, now: UInt64, finish: @escaping (_ answers: [LoopAnswer], _ complete: Bool) -> Void) {
        let asksHubs = peers?.isReachable == true
        let id = start(now: now, remote: asksHubs ? nil : [], finish: finish)
        for mailbox in loops { mailbox.post(.query(query, reply: id)) }
        if asksHubs {
            expectLiveHubs(in: [id], now: now)
            peers?.ask(.loops(query), gather: id, now: now)
        }
    }

    /// `own` receipts of the syncs numbered `seqs`, summed with every other live hub's.
    func gatherReceipts(
        seqs: [Int], own: [Int: ReceiptCounts], now: UInt64, finish: @escaping ([Int: ReceiptCounts]) -> Void
    ) {
        guard let peers, peers.isReachable else { return finish(own) }
        let id = start(now: now, loops: false, remote: nil) { answers, _ in
            var total = own
            for case .receipts(let counts) in answers { total.merge(counts, uniquingKeysWith: +) }
            finish(total)
        }
        expectLiveHubs(in: [id], now: now)
        peers.ask(.receipts(seqs: seqs), gather: id, now: now)
    }

    /// Starts a gather awaiting every client loop (unless `loops` is false) and the other hubs
    /// in `remote` (nil: the live ones, learnt by `expectLiveHubs`).
    func start(
        now: UInt64, loops includeLoops: Bool = true, remote: Set<String>? = [],
        finish: @escaping ([LoopAnswer], Bool) -> Void
    ) -> GatherID {
        gathers.start(loops: includeLoops ? loops.count : 0, remote: remote, deadline: now + Self.timeout, finish: finish)
    }

    /// What this hub's answers become before they go to another hub (the control plane keeps
    /// only what the asker can use: `ControlPlane.registeredOnly`).
    var forPeers: ([LoopAnswer]) -> [LoopAnswer] = { $0 }

    /// A gather whose answers another hub waits for.
    func start(now: UInt64, answering asker: RemoteAsker) -> GatherID {
        start(now: now) { [unowned self] answers, _ in
            self.peers?.answer(asker, self.forPeers(answers), now: MonotonicClock.now())
        }
    }

    /// Makes the gathers `ids` wait for the other hubs live once what was sent so far went out.
    func expectLiveHubs(in ids: [GatherID], now: UInt64) {
        guard let peers, !ids.isEmpty else { return }
        peers.expectLive(now: now) { [unowned self] others in self.gathers.expect(others, in: ids) }
    }

    /// A loop's answer to gather `id`.
    func add(_ answer: LoopAnswer, to id: GatherID) { gathers.add(answer, to: id) }

    /// Gather `id` (started for a change not yet durable) waits until `deadline`.
    func setDeadline(_ deadline: UInt64, of id: GatherID) { gathers.setDeadline(deadline, of: id) }

    /// Forgets gather `id`: the change it waits for will not be delivered.
    func drop(_ id: GatherID) { gathers.drop(id) }

    /// Finishes the gathers whose deadline passed, with what they have.
    func expire(now: UInt64) { gathers.expire(now: now) }

    var nextDeadline: UInt64 { gathers.nextDeadline }

    /// Another hub's question: what it asks its loops, asked of this hub's, or receipts.
    private func answer(_ question: HubQuestion, for asker: RemoteAsker) {
        let now = MonotonicClock.now()
        switch question {
        case .loops(let query):
            let id = start(now: now, answering: asker)
            for mailbox in loops { mailbox.post(.query(query, reply: id)) }
        case .receipts(let seqs):
            peers?.answer(asker, [.receipts(localReceipts(seqs))], now: now)
        }
    }
}
