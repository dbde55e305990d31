/// WebSocket connections per client IPv4 address across every loop, for `--max-connections-per-ip`
/// (DESIGN §9). Its lock is taken once when a connection upgrades and once when it closes, never
/// per message; with the limit off (0) it is never used.
///
/// Invariant: `counts[a]` is the number of admitted, not yet released connections from `a`, and
/// never exceeds the limit it was admitted under; no entry is 0.
final class AddressLedger: Sendable {
    private let counts = PthreadMutex<[UInt32: Int]>([:])

    /// Counts a connection from `address` unless it already has `limit`.
    func admit(_ address: UInt32, limit: Int) -> Bool {
        counts.withLock { counts in
            let held = counts[address, default: 0]
            guard held < limit else { return false }
            counts[address] = held + 1
            return true
        }
    }

    func release(_ address: UInt32) {
        counts.withLock { counts in
            let held = counts[address, default: 0]
            counts[address] = held > 1 ? held - 1 : nil
        }
    }
}
