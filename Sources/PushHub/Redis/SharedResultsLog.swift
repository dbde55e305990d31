/// The results log of hubs scaled out over Redis (`ResultsLog`, DESIGN §6 and §11): one stream
/// every hub appends its result events to and reads whole, so each hub folds the same events in
/// the same order and any hub answers the results of all.
///
/// ```
/// pushhub:results   stream; each entry: hub=<id> events=<ResultEvent lines, JSONL>
/// ```
/// A hub appends the events of a control-plane tick as one entry (`XADD … *`, on the shared
/// journal's command link: pipelined behind it), reads the entries after the last one it folded
/// (`XRANGE (id + COUNT`) after each append and every `pollInterval`, and reads the whole stream
/// at start. Its own events count once they come back from the stream, like everyone else's.
///
/// Delivery: at least once. Events whose append failed are sent again (at most `maxUnsent` wait;
/// beyond that the oldest are dropped and counted, `pushhub_results_dropped_total`). An append
/// cut off by a lost connection may have landed: served and confirmed events are idempotent in
/// the tally; a goal event then counts twice (rare, and alike in every variant).
///
/// Invariant: `lastID` is the ID of the last entry delivered; entries are delivered strictly
/// after it, in stream order, each once. One read is in flight at a time.
final class SharedResultsLog: ResultsLog {
    static let streamKey = "pushhub:results"
    /// Entries per XRANGE.
    static let readCount = 256
    static let pollInterval: UInt64 = 1_000_000_000
    static let maxUnsent = 100_000

    private let link: RedisConnection
    private let hubID: String
    private let metrics: Metrics
    private let saltOf: (String) -> String
    var deliver: (([ResultEvent]) -> Void)?
    private var lastID = "0-0"
    private var reading = false
    /// Callers waiting for a read that starts after they asked.
    private var waitingForNextRead: [(String?) -> Void] = []
    private var unsent: [ResultEvent] = []
    private var nextPoll: UInt64 = 0
    /// Entries or lines that did not decode (skipped, counted, logged once per read).
    private(set) var skipped = 0

    init(link: RedisConnection, hubID: String, metrics: Metrics, saltOf: @escaping (String) -> String) {
        self.link = link
        self.hubID = hubID
        self.metrics = metrics
        self.saltOf = saltOf
    }

    var kept: String { "redis" }

    /// The whole stream is read by the first poll (at the first tick with the link up).
    func load(now: UInt64) { nextPoll = 0 }

    func append(_ events: [ResultEvent], now: UInt64) {
        unsent += events
        if unsent.count > Self.maxUnsent {
            let dropped = unsent.count - Self.maxUnsent
            unsent.removeFirst(dropped)
            metrics.resultsDropped.add(dropped, ordering: .relaxed)
            Log.error("results waiting for Redis exceed \(Self.maxUnsent); dropped the oldest", [("dropped", dropped)])
        }
        sendUnsent(now: now)
    }

    private func sendUnsent(now: UInt64) {
        guard !unsent.isEmpty, link.isReady else { return }
        let events = unsent
        unsent.removeAll()
        let command = RedisCommand(
            "XADD", bytes: [Array(Self.streamKey.utf8), [UInt8(ascii: "*")], Array("hub".utf8), Array(hubID.utf8),
                Array("events".utf8), ResultEvent.lines(events)], label: "XADD \(Self.streamKey)")
        link.send(command, now: now) { [unowned self] result in
            if case .failure(let error) = result {
                Log.warning("could not append results to Redis; sending them again", [("error", "\(error)")])
                self.unsent = events + self.unsent
                return
            }
            self.nextPoll = 0  // read our own entry back soon
        }
    }

    func catchUp(now: UInt64, done: @escaping (String?) -> Void) {
        waitingForNextRead.append(done)
        if !reading { read(now: now) }
    }

    func tick(now: UInt64) {
        sendUnsent(now: now)
        if !reading && now >= nextPoll { read(now: now) }
    }

    var nextDeadline: UInt64 { reading ? .max : nextPoll }

    /// Reads every entry after `lastID`, page by page; then answers those who waited for it.
    private func read(now: UInt64) {
        let waiting = waitingForNextRead
        waitingForNextRead.removeAll()
        nextPoll = now + Self.pollInterval
        guard link.isReady else {
            for done in waiting { done("Redis is not reachable (\(link.lastError)); results may lack the newest events") }
            return
        }
        reading = true
        func page() {
            let command = RedisCommand(
                "XRANGE", [Self.streamKey, "(" + lastID, "+", "COUNT", String(Self.readCount)],
                label: "XRANGE \(Self.streamKey)")
            link.send(command, now: MonotonicClock.now()) { [unowned self] result in
                switch result {
                case .failure(let error):
                    self.finishRead(waiting, failure: "reading results from Redis failed: \(error)")
                case .success(let reply):
                    let count = self.deliverEntries(reply)
                    count == Self.readCount ? page() : self.finishRead(waiting, failure: nil)
                }
            }
        }
        page()
    }

    private func finishRead(_ waiting: [(String?) -> Void], failure: String?) {
        reading = false
        for done in waiting { done(failure) }
        // Those who asked during this read wait for one that started after them.
        if !waitingForNextRead.isEmpty { read(now: MonotonicClock.now()) }
    }

    /// Hands over the events of an XRANGE reply; returns how many entries it held.
    private func deliverEntries(_ reply: RESPValue) -> Int {
        guard let entries = reply.elements else { return 0 }
        var events: [ResultEvent] = []
        let skippedBefore = skipped
        for entry in entries {
            guard let parts = entry.elements, parts.count == 2, let id = parts[0].string else {
                skipped += 1
                continue
            }
            lastID = id
            guard let fields = parts[1].elements, let lines = Self.field("events", in: fields) else {
                skipped += 1
                continue
            }
            let decoded = ResultEvent.events(inLines: lines[...], saltOf: saltOf)
            events += decoded.events
            skipped += decoded.skipped
        }
        if skipped > skippedBefore {
            Log.warning("skipped results in Redis that do not decode", [("count", skipped - skippedBefore)])
        }
        if !events.isEmpty { deliver?(events) }
        return entries.count
    }

    private static func field(_ name: String, in fields: [RESPValue]) -> [UInt8]? {
        var index = 0
        while index + 1 < fields.count {
            if fields[index].string == name, case .bulkString(let bytes?) = fields[index + 1] { return bytes }
            index += 2
        }
        return nil
    }
}
