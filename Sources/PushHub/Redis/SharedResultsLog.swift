/// The results log of hubs scaled out over Redis (`ResultsLog`, DESIGN §6 and §11): one stream
/// every hub appends its result events to and reads whole, so each hub folds the same events in
/// the same order and any hub answers the results of all.
///
/// ```
/// pushhub:results   stream; each entry: hub=<id> seq=<n> events=<ResultEvent lines, JSONL>
/// ```
/// A hub appends the events of a control-plane tick as entries of at most `maxEntryEvents`
/// (`XADD … *`, on the shared journal's command link: pipelined behind it), numbered 1, 2, … per
/// hub process (`seq`); it reads the entries after the last one it folded (`XRANGE (id + COUNT`)
/// after each append and every `pollInterval`, and the whole stream at start. Its own events count
/// once they come back from the stream, like everyone else's.
///
/// Delivery: exactly once per entry, in order per hub. An append that failed is sent again, in
/// the order the failures came (a pipeline fails front to back), keeping its `seq` when Redis may
/// have applied it (the link dropped, the reply timed out): the reader skips an entry whose `seq`
/// is not above the last one it read from that hub, so a batch that landed twice counts once.
/// At most `maxUnsent` events wait while Redis is away; beyond that the oldest batches are dropped
/// and counted (`pushhub_results_dropped_total`).
///
/// Invariant: `lastID` is the ID of the last entry read; entries are read strictly after it, in
/// stream order. One read is in flight at a time.
final class SharedResultsLog: ResultsLog {
    static let streamKey = "pushhub:results"
    /// Entries per XRANGE: at most 16,000 lines (~2.4 MB) a page, decoded and folded on the
    /// control plane's thread in ~40 ms, so a hub reading a long stream at start keeps answering
    /// admin requests between pages (`bench/README.md` "Experiment results").
    static let readCount = 16
    static let maxEntryEvents = 1000
    static let pollInterval: UInt64 = 1_000_000_000
    static let maxUnsent = 100_000

    /// Events appended as one entry, numbered per hub process.
    private struct Batch {
        var seq: Int
        var events: [ResultEvent]
    }

    private let link: RedisConnection
    private let hubID: String
    private let metrics: Metrics
    private let saltOf: (String) -> String
    var deliver: (([ResultEvent]) -> Void)?
    private var lastID = "0-0"
    private var reading = false
    /// Callers waiting for a read that starts after they asked.
    private var waitingForNextRead: [(String?) -> Void] = []
    private var nextSeq = 1
    /// Batches to send, in order; those whose append failed come back to the front.
    private var unsent: [Batch] = []
    private var failed: [Batch] = []
    /// Sent and not yet read back (or failed).
    private var inFlight = Set<Int>()
    /// The last `seq` read from each hub.
    private var lastSeqOfHub: [String: Int] = [:]
    private var nextPoll: UInt64 = 0
    private(set) var isLoaded = false
    /// Entries or lines that did not decode (skipped, counted, logged once per read).
    private(set) var skipped = 0

    init(link: RedisConnection, hubID: String, metrics: Metrics, saltOf: @escaping (String) -> String) {
        self.link = link
        self.hubID = hubID
        self.metrics = metrics
        self.saltOf = saltOf
    }

    var kept: String { "redis" }

    var hasUndelivered: Bool { !unsent.isEmpty || !failed.isEmpty || !inFlight.isEmpty }

    /// The whole stream is read by the first poll (at the first tick with the link up).
    func load(now: UInt64) { nextPoll = 0 }

    func append(_ events: [ResultEvent], now: UInt64) {
        var start = 0
        while start < events.count {
            let end = min(start + Self.maxEntryEvents, events.count)
            unsent.append(Batch(seq: nextSeq, events: Array(events[start..<end])))
            nextSeq += 1
            start = end
        }
        var waiting = (unsent + failed).reduce(0) { $0 + $1.events.count }
        var dropped = 0
        while waiting > Self.maxUnsent {
            let oldest = failed.isEmpty ? unsent.removeFirst() : failed.removeFirst()
            waiting -= oldest.events.count
            dropped += oldest.events.count
        }
        if dropped > 0 {
            metrics.resultsDropped.add(dropped, ordering: .relaxed)
            Log.error("results waiting for Redis exceed \(Self.maxUnsent); dropped the oldest", [("dropped", dropped)])
        }
        sendUnsent(now: now)
    }

    private func sendUnsent(now: UInt64) {
        guard link.isReady, !(unsent.isEmpty && failed.isEmpty) else { return }
        let batches = failed + unsent
        failed.removeAll()
        unsent.removeAll()
        for batch in batches {
            inFlight.insert(batch.seq)
            let command = RedisCommand(
                "XADD",
                bytes: [
                    Array(Self.streamKey.utf8), [UInt8(ascii: "*")], Array("hub".utf8), Array(hubID.utf8),
                    Array("seq".utf8), Array(String(batch.seq).utf8), Array("events".utf8),
                    ResultEvent.lines(batch.events),
                ], label: "XADD \(Self.streamKey)")
            link.send(command, now: now) { [unowned self] result in
                guard case .failure(let error) = result else {
                    self.nextPoll = 0  // read our own entry back soon
                    return
                }
                self.inFlight.remove(batch.seq)
                var again = batch
                if case .server = error {
                    // Redis refused it: it was not applied, and a later batch may have been.
                    again.seq = self.nextSeq
                    self.nextSeq += 1
                }
                Log.warning("could not append results to Redis; sending them again", [("error", "\(error)")])
                self.failed.append(again)
            }
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
            for done in waiting { done("Redis is not reachable (\(link.notReadyReason)); results may lack the newest events") }
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
                    guard count == Self.readCount else {
                        self.isLoaded = true
                        return self.finishRead(waiting, failure: nil)
                    }
                    page()
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
            let hub = Self.field("hub", in: fields).map { String(decoding: $0, as: UTF8.self) } ?? ""
            if let seq = Self.field("seq", in: fields).flatMap({ Int(String(decoding: $0, as: UTF8.self)) }) {
                if hub == hubID { inFlight.remove(seq) }
                // An append sent again after it had landed: read once already.
                guard seq > lastSeqOfHub[hub] ?? 0 else { continue }
                lastSeqOfHub[hub] = seq
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
