import Synchronization

/// Every sync until its TTL (DESIGN §5), in sequence order, durable through its `RecordLog`.
///
/// Invariants: `syncs` is sorted by `seq`; `seq` is the last number given out and never goes
/// back; expired syncs are dropped lazily (on the next append or read).
public final class SyncLog: Sendable {
    struct State {
        var syncs: [Sync] = []
        var byID: [String: Sync] = [:]
        var seq = 0
    }

    private let state: Mutex<State>
    private let log: RecordLog?

    public init(dataDirectory: String?) throws {
        var restored = State()
        if let dataDirectory {
            let log = try RecordLog(directory: dataDirectory, name: "syncs")
            try log.restore(
                snapshot: { json in
                    restored.seq = json["seq"]?.intValue ?? 0
                    for entry in json["syncs"]?.arrayValue ?? [] {
                        if let sync = Sync.decode(entry) { Self.add(sync, to: &restored) }
                    }
                },
                record: { json in
                    if let sync = Sync.decode(json) { Self.add(sync, to: &restored) }
                })
            self.log = log
        } else {
            log = nil
        }
        state = Mutex(restored)
    }

    public var lastSeq: Int { state.withLock { $0.seq } }

    /// Journals and adds a sync built by `make` with the next sequence number.
    public func append(now: Int, _ make: (Int) -> Sync) throws -> Sync {
        try state.withLock { state in
            Self.prune(&state, now: now)
            let sync = make(state.seq + 1)
            try log?.append(sync.json) {
                var after = state
                Self.add(sync, to: &after)
                return .object(["seq": .number(Double(after.seq)), "syncs": .array(after.syncs.map(\.json))])
            }
            Self.add(sync, to: &state)
            return sync
        }
    }

    public func find(_ id: String) -> Sync? { state.withLock { $0.byID[id] } }

    /// The unexpired syncs after `seq` that `accepts` takes, newest per collapse key (DESIGN §5
    /// continuity); a survivor stands for its group and is mandatory if any member was.
    public func missed(after seq: Int, now: Int, accepts: (Sync) -> Bool) -> [(sync: Sync, mandatory: Bool)] {
        let candidates = state.withLock { state in state.syncs.filter { $0.seq > seq && $0.expiresAt > now } }.filter(
            accepts)
        var survivors: [String: (sync: Sync, mandatory: Bool)] = [:]
        var result: [(sync: Sync, mandatory: Bool)] = []
        for sync in candidates {
            guard let key = sync.collapse else {
                result.append((sync, sync.mandatory))
                continue
            }
            let previous = survivors[key]
            survivors[key] = (sync, sync.mandatory || (previous?.mandatory ?? false))
        }
        result += survivors.values
        return result.sorted { $0.sync.seq < $1.sync.seq }
    }

    static func add(_ sync: Sync, to state: inout State) {
        state.syncs.append(sync)
        state.byID[sync.id] = sync
        state.seq = max(state.seq, sync.seq)
    }

    static func prune(_ state: inout State, now: Int) {
        guard let first = state.syncs.first,
            first.expiresAt <= now || state.syncs.contains(where: { $0.expiresAt <= now })
        else { return }
        let expired = state.syncs.filter { $0.expiresAt <= now }
        for sync in expired { state.byID[sync.id] = nil }
        state.syncs.removeAll { $0.expiresAt <= now }
    }
}

@available(*, unavailable)
extension SyncLog.State: Sendable {}
