/// The live part of the sync log (DESIGN §5): every sync until its TTL, in sequence order.
///
/// Invariants: `syncs` is sorted by `seq`; `lastSeq` is the last number given out and never goes
/// back (it survives the expiry of every sync); `byID` indexes exactly `syncs`. Expired syncs are
/// dropped when a newer one is appended (its creation time is the clock), so every copy of the
/// window that applied the same appends holds the same syncs.
public struct SyncWindow: Sendable {
    public private(set) var syncs: [Sync] = []
    private var byID: [String: Sync] = [:]
    public private(set) var lastSeq = 0

    public init() {}

    public func find(_ id: String) -> Sync? { byID[id] }

    mutating func append(_ sync: Sync) {
        if let first = syncs.first, first.expiresAt <= sync.createdAt || syncs.contains(where: { $0.expiresAt <= sync.createdAt }) {
            for expired in syncs where expired.expiresAt <= sync.createdAt { byID[expired.id] = nil }
            syncs.removeAll { $0.expiresAt <= sync.createdAt }
        }
        syncs.append(sync)
        byID[sync.id] = sync
        lastSeq = max(lastSeq, sync.seq)
    }

    /// Sets the numbering when every sync up to `seq` has expired (restoring a snapshot).
    mutating func numberFrom(_ seq: Int) { lastSeq = max(lastSeq, seq) }

    /// The unexpired syncs after `seq` that `accepts` takes, newest per collapse key (DESIGN §5
    /// continuity); a survivor stands for its group and is mandatory if any member was.
    ///
    /// Also every unexpired sync at or below `seq` that was sent with a `spread`: a client's turn
    /// in a spread can come after a later sync reached it, so having seen `seq` does not mean it
    /// had those (the soak found such syncs lost when the client reconnected in between). Clients
    /// dedupe by id, so one it had already is harmless; one it never had would be a gap.
    public func missed(after seq: Int, now: Int, accepts: (Sync) -> Bool) -> [(sync: Sync, mandatory: Bool)] {
        var survivors: [String: (sync: Sync, mandatory: Bool)] = [:]
        var result: [(sync: Sync, mandatory: Bool)] = []
        for sync in syncs.reversed() {
            if sync.seq <= seq && sync.spreadMilliseconds == 0 { continue }
            guard sync.expiresAt > now, accepts(sync) else { continue }
            guard let key = sync.collapse else {
                result.append((sync, sync.mandatory))
                continue
            }
            let previous = survivors[key]
            survivors[key] = (previous?.sync ?? sync, sync.mandatory || (previous?.mandatory ?? false))
        }
        result += survivors.values
        return result.sorted { $0.sync.seq < $1.sync.seq }
    }
}
