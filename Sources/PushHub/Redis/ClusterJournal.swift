/// The replicated journal of hubs scaled out over Redis (DESIGN §11): a Redis stream whose
/// entries are batches of `HubRecord`s, applied by every hub in stream order.
///
/// Keys:
/// ```
/// pushhub:journal            stream; entry 0-N is the N-th batch: hub=<id> records=<JSON array>
/// pushhub:journal:appended   pub/sub channel: "N" after entry N was appended
/// pushhub:snapshot           hash: lsn=<N> records=<JSON array rebuilding the state as of entry N>
/// pushhub:cohort:<name>      set: the users a cohort lists (the snapshot leaves them out)
/// ```
///
/// Cohorts of millions: a cohort's users live in its set, changed in the same script as the
/// entry that changes them (so the set always holds the latest list), and a snapshot names the
/// cohort without its users; a hub that loads the snapshot reads the set (`SSCAN`, in batches)
/// and then applies the entries after the snapshot, which leaves each id as its last change says.
///
/// Order: a hub appends the batch it made against the state as of entry N as entry `0-(N+1)`
/// exactly. Redis refuses an ID that is not above the stream's top, so the append succeeds
/// only if no hub appended since N — a compare-and-append. On a refusal the hub reads the
/// entries it missed and makes its batch again against the new state. Entry numbers are
/// therefore gapless, every hub applies the same entries in the same order, and versions and
/// sync seqs (which each batch computed from the state before it) are unique and gapless too.
///
/// Invariant: `applied` is the number of the last entry the owner applied; entries are fetched
/// and handed over strictly after it, in order, and a gap (entries trimmed away) is reported,
/// never skipped.
final class ClusterJournal {
    static let streamKey = "pushhub:journal"
    static let noticeChannel = "pushhub:journal:appended"
    static let snapshotKey = "pushhub:snapshot"
    /// Entries read per XRANGE.
    static let fetchCount = 512
    /// Entries kept in the stream behind the newest snapshot, so that a hub that fell behind
    /// catches up from the stream rather than reloading the snapshot.
    static let retainedEntries = 10_000

    /// One batch as the stream holds it.
    struct Entry {
        var lsn: Int
        var hub: String
        var records: [HubRecord]
        /// Records whose change the appending hub counts over every hub: record index → its
        /// gather (each hub answers on `ClusterWire.answersChannel(of: hub)`).
        var gathers: [Int: GatherID] = [:]
    }

    enum AppendOutcome {
        case appended(lsn: Int)
        /// Another hub appended first: read what it appended, then make the batch again.
        case conflict
        case failed(RedisError)
    }

    enum FetchOutcome {
        /// The entries after `applied`, in order (empty: none); `more` when a read hit its count.
        case entries([Entry], more: Bool)
        /// The stream no longer holds entry `expected` (trimmed): reload from the snapshot.
        case gap(expected: Int, found: Int)
        /// An entry this hub cannot apply (a newer PushHub wrote it, or it is corrupt).
        case undecodable(lsn: Int, reason: String)
        case failed(RedisError)
    }

    let hubID: String
    let commands: RedisConnection
    let notices: RedisConnection
    private(set) var applied: Int
    /// Called when another hub announces an entry after `applied`, and when the notice link
    /// (re)subscribes (a notice may have been missed meanwhile).
    var onNotice: (() -> Void)?
    /// Messages on the other channels the notice link listens to (`ClusterWire`): channel, payload.
    var onMessage: ((String, [UInt8]) -> Void)?

    init(endpoint: RedisEndpoint, hubID: String, applied: Int, now: UInt64) {
        self.hubID = hubID
        self.applied = applied
        commands = RedisConnection(options: endpoint.options(clientName: "pushhub:\(hubID):commands"), now: now)
        notices = RedisConnection(options: endpoint.options(clientName: "pushhub:\(hubID):notices"), now: now)
        notices.pushHandler = { [unowned self] message in
            // ["message", channel, payload]
            guard let parts = message.elements, parts.count == 3, let channel = parts[1].string,
                case .bulkString(let payload?) = parts[2]
            else { return }
            if channel == Self.noticeChannel {
                guard let lsn = Int(String(decoding: payload, as: UTF8.self)), lsn > self.applied else { return }
                self.onNotice?()
            } else {
                self.onMessage?(channel, payload)
            }
        }
        let channels = [Self.noticeChannel, ClusterWire.gatherChannel, ClusterWire.answersChannel(of: hubID)]
        notices.onReady = { [unowned self] in
            // One SUBSCRIBE per channel, so that each has exactly one reply; once the last is
            // confirmed every subscription is in place, and the journal is read for what was missed.
            subscribed = false
            for (index, channel) in channels.enumerated() {
                notices.send(RedisCommand("SUBSCRIBE", [channel]), now: MonotonicClock.now()) { [unowned self] result in
                    guard case .success = result, index == channels.count - 1 else { return }
                    subscribed = true
                    self.onNotice?()
                }
            }
        }
    }

    deinit {
        // The pending replies' handlers may refer to this journal's owner, which is going away too.
        commands.abandon()
        notices.abandon()
    }

    var isReady: Bool { commands.isReady }

    /// The last SUBSCRIBE since the notice link's latest connect was confirmed.
    private var subscribed = false

    /// Both links are up and the notice link listens on every channel: another hub's entry is
    /// announced to this one from now on.
    var isListening: Bool { commands.isReady && notices.isReady && subscribed }

    /// How often the notice link is pinged: it waits for no replies otherwise, so a dead
    /// connection would go unnoticed (the ping's timeout drops and remakes it).
    static let noticePingInterval: UInt64 = 5_000_000_000
    private(set) var nextNoticePing: UInt64 = 0

    /// Pings the notice link when due.
    func tick(now: UInt64) {
        guard notices.isReady, now >= nextNoticePing else { return }
        nextNoticePing = now + Self.noticePingInterval
        notices.send(RedisCommand("PING", []), now: now) { _ in }
    }

    /// Why the command link is not ready: its last failure, or "connecting" before the first.
    var notReadyReason: String { commands.notReadyReason }

    func close() {
        commands.close()
        notices.close()
    }

    /// Drops both links so that they connect again (to the master Sentinel names by then).
    func reconnect(because reason: String, now: UInt64) {
        commands.reconnect(because: reason, now: now)
        notices.reconnect(because: reason, now: now)
    }

    /// Appends `records` as entry `applied + 1`; announces it to the other hubs when it lands.
    /// - Parameter gathers: records whose change every hub answers about (`Entry.gathers`).
    func append(
        _ records: [HubRecord], gathers: [(record: Int, id: GatherID)] = [], now: UInt64,
        done: @escaping (AppendOutcome) -> Void
    ) {
        let lsn = applied + 1
        var fields: [[UInt8]] = [
            Array(Self.streamKey.utf8), Array("0-\(lsn)".utf8), Array("hub".utf8), Array(hubID.utf8),
            Array("records".utf8), JSONWriter.write(.array(records.map(\.json))),
        ]
        if !gathers.isEmpty {
            fields.append(Array("gathers".utf8))
            fields.append(
                JSONWriter.write(
                    .array(gathers.map { .array([.number(Double($0.record)), .number(Double($0.id))]) })))
        }
        let cohortOps = Self.cohortOps(records)
        let command =
            cohortOps.isEmpty
            ? RedisCommand("XADD", bytes: fields, label: "XADD \(Self.streamKey)")
            : RedisCommand(
                "EVAL",
                bytes: [
                    Array(Self.appendWithCohortsScript.utf8), Array("2".utf8), fields[0], Array(Self.cohortKeyPrefix.utf8),
                    fields[1], JSONWriter.write(.array(cohortOps)),
                ] + fields[2...], label: "XADD \(Self.streamKey) (with cohort sets)")
        commands.send(command, now: now) { [unowned self] result in
            switch result {
            case .success:
                self.applied = lsn
                done(.appended(lsn: lsn))
                self.commands.send(RedisCommand("PUBLISH", [Self.noticeChannel, String(lsn)]), now: MonotonicClock.now()) { _ in }
            case .failure(.server(_, let message)) where message.contains("equal or smaller"):
                done(.conflict)
            case .failure(let error) where error.isReadOnlyReplica:
                // A failover made this server a replica: find the master again.
                self.reconnect(because: "\(self.commands.address) became a replica", now: MonotonicClock.now())
                done(.failed(error))
            case .failure(let error):
                done(.failed(error))
            }
        }
    }

    static let cohortKeyPrefix = "pushhub:cohort:"

    /// XADD, then the cohort sets the entry changes; atomic (a script), and nothing happens when
    /// the XADD is refused. KEYS: stream, cohort key prefix; ARGV: id, ops (JSON), XADD fields.
    static let appendWithCohortsScript = """
        redis.call('XADD', KEYS[1], ARGV[1], unpack(ARGV, 3))
        for _, op in ipairs(cjson.decode(ARGV[2])) do
            local key = KEYS[2] .. op[2]
            if op[1] == 'set' or op[1] == 'delete' then redis.call('DEL', key) end
            local ids = op[3]
            if ids then
                for first = 1, #ids, 5000 do
                    local last = math.min(first + 4999, #ids)
                    redis.call(op[1] == 'remove' and 'SREM' or 'SADD', key, unpack(ids, first, last))
                end
            end
        end
        return ARGV[1]
        """

    /// What `records` do to cohort sets: ["set"|"add"|"remove", name, ids] or ["delete", name].
    static func cohortOps(_ records: [HubRecord]) -> [JSONValue] {
        var ops: [JSONValue] = []
        for record in records {
            switch record {
            case .cohortSet(let name, let cohort):
                ops.append(.array([.string("set"), .string(name), .array(cohort.users.sorted().map(JSONValue.string))]))
            case .cohortUsersEdited(let name, let add, let remove):
                if !add.isEmpty { ops.append(.array([.string("add"), .string(name), .array(add.map(JSONValue.string))])) }
                if !remove.isEmpty {
                    ops.append(.array([.string("remove"), .string(name), .array(remove.map(JSONValue.string))]))
                }
            case .cohortDeleted(let name):
                ops.append(.array([.string("delete"), .string(name)]))
            case .screenPublished, .screenDeleted, .screenNumbered, .cohortRuleSet, .experimentPut, .experimentDeleted,
                .stickyAssigned, .syncAppended, .syncNumbered, .adminTokenCreated, .adminTokenRevoked, .releasePut,
                .releaseStepped, .componentPut, .componentDeleted, .appProfilePut, .appProfileDeleted, .pushDeviceSet,
                .pushDeviceRemoved, .webhook:
                continue
            }
        }
        return ops
    }

    /// One batch of cohort `name`'s users from `cursor` ("0" to start).
    static func scanCommand(cohort name: String, from cursor: String) -> RedisCommand {
        RedisCommand("SSCAN", [cohortKeyPrefix + name, cursor, "COUNT", "10000"], label: "SSCAN \(cohortKeyPrefix)\(name)")
    }

    /// An SSCAN reply: the next cursor ("0": done) and a batch of members.
    static func scanned(_ reply: RESPValue) -> Result<(next: String, members: [String]), RedisError> {
        guard let parts = reply.elements, parts.count == 2, let next = parts[0].string else {
            return .failure(.badReply(command: "SSCAN", reason: "not [cursor, members]"))
        }
        return .success((next, (parts[1].elements ?? []).compactMap(\.string)))
    }

    /// The entries after `lsn`, at most `fetchCount`.
    static func rangeCommand(after lsn: Int) -> RedisCommand {
        RedisCommand("XRANGE", [streamKey, "(0-\(lsn)", "+", "COUNT", String(fetchCount)], label: "XRANGE \(streamKey)")
    }

    /// Every member of `name`'s set, read in batches.
    func readMembers(of name: String, now: UInt64, done: @escaping (Result<[String], RedisError>) -> Void) {
        var members: [String] = []
        func scan(from cursor: String) {
            commands.send(Self.scanCommand(cohort: name, from: cursor), now: MonotonicClock.now()) { result in
                switch result.flatMap(Self.scanned) {
                case .failure(let error): done(.failure(error))
                case .success(let batch):
                    members += batch.members
                    batch.next == "0" ? done(.success(members)) : scan(from: batch.next)
                }
            }
        }
        scan(from: "0")
    }

    /// Reads the entries after `applied` (at most `fetchCount`).
    func fetch(now: UInt64, done: @escaping (FetchOutcome) -> Void) {
        let command = Self.rangeCommand(after: applied)
        let expected = applied + 1
        commands.send(command, now: now) { result in
            switch result {
            case .failure(let error):
                done(.failed(error))
            case .success(let reply):
                done(Self.entries(in: reply, from: expected))
            }
        }
    }

    /// Publishes `payload` on `channel` (best effort: pub/sub keeps nothing for a hub away).
    func publish(_ channel: String, _ payload: [UInt8], now: UInt64) {
        commands.send(RedisCommand("PUBLISH", bytes: [Array(channel.utf8), payload]), now: now) { _ in }
    }

    /// Marks entries up to `lsn` applied (the owner applied what `fetch` handed it).
    func advance(to lsn: Int) {
        precondition(lsn >= applied, "the journal only moves forward")
        applied = lsn
    }

    /// Stores `records` (the whole state as of entry `lsn`) as the snapshot, unless a newer one
    /// is there, and trims the stream to `retainedEntries` behind it.
    func writeSnapshot(_ records: [HubRecord], lsn: Int, now: UInt64) {
        let script = """
            local current = tonumber(redis.call('HGET', KEYS[1], 'lsn') or '0')
            if tonumber(ARGV[1]) <= current then return 0 end
            redis.call('HSET', KEYS[1], 'lsn', ARGV[1], 'records', ARGV[2])
            if tonumber(ARGV[3]) > 0 then redis.call('XTRIM', KEYS[2], 'MINID', '0-' .. ARGV[3]) end
            return 1
            """
        let trimBelow = max(0, lsn - Self.retainedEntries)
        // Cohorts without their users: those are in the cohort sets.
        let stored: [JSONValue] = records.map { record in
            guard case .cohortSet(let name, let cohort) = record else { return record.json }
            guard case .object(var members) = HubRecord.cohortSet(name, Cohort(users: [], rule: cohort.rule)).json else {
                return record.json
            }
            members["users_in"] = .string("set")
            return .object(members)
        }
        let command = RedisCommand(
            "EVAL",
            bytes: [
                Array(script.utf8), Array("2".utf8), Array(Self.snapshotKey.utf8), Array(Self.streamKey.utf8),
                Array(String(lsn).utf8), JSONWriter.write(.array(stored)), Array(String(trimBelow).utf8),
            ], label: "EVAL (write the snapshot)")
        commands.send(command, now: now) { result in
            if case .failure(let error) = result {
                // The stream still holds every entry since the last snapshot: nothing is lost.
                Log.warning("writing the shared snapshot failed", [("error", "\(error)")])
            }
        }
    }

    /// Reads the shared snapshot: the entry it is as of, and its records.
    /// Why the snapshot was not read: Redis did not answer (try again), or what it holds cannot be
    /// applied (trying again will not help).
    enum SnapshotFailure: Error {
        case redis(RedisError)
        case unreadable(HubRecord.DecodingError)
    }

    /// The snapshot's records, with the users of the cohorts kept in sets read back in.
    func readSnapshot(now: UInt64, done: @escaping (Result<(lsn: Int, records: [HubRecord]), SnapshotFailure>) -> Void) {
        commands.send(RedisCommand("HGETALL", [Self.snapshotKey]), now: now) { [unowned self] result in
            switch result {
            case .failure(let error): done(.failure(.redis(error)))
            case .success(let reply):
                switch Self.snapshotWithSets(in: reply) {
                case .failure(let error): done(.failure(.unreadable(error)))
                case .success(let snapshot):
                    var records = snapshot.records
                    var pending = snapshot.cohortsInSets[...]
                    func next() {
                        guard let name = pending.popFirst() else { return done(.success((snapshot.lsn, records))) }
                        readMembers(of: name, now: MonotonicClock.now()) { members in
                            switch members {
                            case .failure(let error): done(.failure(.redis(error)))
                            case .success(let users):
                                records.append(.cohortUsersEdited(name, add: users, remove: []))
                                next()
                            }
                        }
                    }
                    next()
                }
            }
        }
    }

    // MARK: - Decoding

    /// The snapshot in an HGETALL reply of `snapshotKey` (none yet: entry 0, no records), and
    /// the cohorts whose users are in their sets (to read before applying the entries after it).
    static func snapshotWithSets(in reply: RESPValue)
        -> Result<(lsn: Int, records: [HubRecord], cohortsInSets: [String]), HubRecord.DecodingError>
    {
        var inSets: [String] = []
        let fields = reply.elements ?? []
        var lsn = 0
        var records: [HubRecord] = []
        var index = 0
        while index + 1 < fields.count {
            switch fields[index].string {
            case "lsn":
                guard let value = fields[index + 1].string.flatMap({ Int($0) }), (0...maxLSN).contains(value) else {
                    return .failure(HubRecord.DecodingError(description: "an lsn that is not a number from 0 to 2^53"))
                }
                lsn = value
            case "records":
                guard case .bulkString(let bytes?) = fields[index + 1] else { break }
                switch Self.decodeRecords(bytes) {
                case .success(let decoded):
                    records = decoded.records
                    // The cohorts stored without their users (see writeSnapshot).
                    inSets = decoded.json.compactMap {
                        $0["users_in"]?.stringValue == "set" ? $0["name"]?.stringValue : nil
                    }
                case .failure(let error): return .failure(error)
                }
            default: break
            }
            index += 2
        }
        return .success((lsn, records, inSets))
    }

    /// The entries of an XRANGE reply, checked to follow on from `expected` without a gap.
    static func entries(in reply: RESPValue, from expected: Int) -> FetchOutcome {
        guard let items = reply.elements else {
            return .failed(.badReply(command: "XRANGE \(streamKey)", reason: "not an array"))
        }
        var entries: [Entry] = []
        entries.reserveCapacity(items.count)
        var next = expected
        for item in items {
            guard let parts = item.elements, parts.count == 2, let id = parts[0].string, let fields = parts[1].elements
            else {
                return .failed(.badReply(command: "XRANGE \(streamKey)", reason: "an entry that is not [id, fields]"))
            }
            guard let lsn = lsn(of: id) else {
                // Not written by a hub (an XADD with `*`): following would conflict forever.
                return .undecodable(lsn: next, reason: "the stream holds an entry \(id) that no hub wrote (ids are 0-N)")
            }
            guard lsn == next else { return .gap(expected: next, found: lsn) }
            switch entry(lsn: lsn, fields: fields) {
            case .success(let entry): entries.append(entry)
            case .failure(let failure): return .undecodable(lsn: lsn, reason: failure.description)
            }
            next += 1
        }
        return .entries(entries, more: items.count == fetchCount)
    }

    /// Entry numbers stay below this, so that `applied + 1` never overflows whatever Redis holds.
    static let maxLSN = 1 << 53

    /// N of a stream ID `0-N`.
    static func lsn(of id: String) -> Int? {
        guard id.hasPrefix("0-"), let lsn = Int(id.dropFirst(2)), (1...maxLSN).contains(lsn) else { return nil }
        return lsn
    }

    static func entry(lsn: Int, fields: [RESPValue]) -> Result<Entry, HubRecord.DecodingError> {
        var hub = ""
        var recordBytes: [UInt8]?
        var gathers: [Int: GatherID] = [:]
        var index = 0
        while index + 1 < fields.count {
            switch fields[index].string {
            case "hub": hub = fields[index + 1].string ?? ""
            case "records": if case .bulkString(let bytes?) = fields[index + 1] { recordBytes = bytes }
            case "gathers":
                // Counting is best effort: a list that does not parse only leaves counts to time out.
                let pairs = fields[index + 1].string.flatMap { try? JSONReader.parse(Array($0.utf8)) }?.arrayValue ?? []
                for pair in pairs {
                    guard let both = pair.arrayValue, both.count == 2, let record = both[0].intValue,
                        let id = both[1].intValue, id >= 0
                    else { continue }
                    gathers[record] = GatherID(id)
                }
            default: break
            }
            index += 2
        }
        guard let recordBytes else { return .failure(HubRecord.DecodingError(description: "entry \(lsn) has no records")) }
        return records(recordBytes).map { Entry(lsn: lsn, hub: hub, records: $0, gathers: gathers) }
    }

    /// Records from a JSON array of record objects (an entry's or the snapshot's).
    static func records(_ bytes: [UInt8]) -> Result<[HubRecord], HubRecord.DecodingError> {
        decodeRecords(bytes).map(\.records)
    }

    /// The records, and the JSON they were decoded from (one parse for both).
    private static func decodeRecords(_ bytes: [UInt8])
        -> Result<(records: [HubRecord], json: [JSONValue]), HubRecord.DecodingError>
    {
        let json: JSONValue
        do {
            json = try JSONReader.parse(bytes, maxDepth: 10_000)
        } catch {
            return .failure(HubRecord.DecodingError(description: "records that are not JSON: \(error)"))
        }
        guard let list = json.arrayValue else {
            return .failure(HubRecord.DecodingError(description: "records that are not a JSON array"))
        }
        var records: [HubRecord] = []
        records.reserveCapacity(list.count)
        for element in list {
            do {
                records.append(try HubRecord(json: element))
            } catch {
                return .failure(error)
            }
        }
        return .success((records, list))
    }
}

@available(*, unavailable)
extension ClusterJournal: Sendable {}
