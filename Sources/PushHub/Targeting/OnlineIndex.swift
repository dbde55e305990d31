import Synchronization

/// Who is connected, across all loops, indexed both ways (DESIGN §5 registry): connection →
/// attributes, user → connections. Updated on hello and disconnect only (never per message);
/// read by the admin API to resolve targets and count reach.
///
/// Invariants: `byUser[u]` contains a key iff `clients[key].user == u`; no empty sets remain.
public final class OnlineIndex: Sendable {
    /// A connection, hub-wide: its loop and its token on that loop.
    public struct Key: Hashable, Sendable {
        public var loop: Int
        public var token: UInt64
    }

    struct State {
        var clients: [Key: ClientAttributes] = [:]
        var byUser: [String: Set<Key>] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    func add(_ key: Key, _ attributes: ClientAttributes) {
        state.withLock { state in
            state.clients[key] = attributes
            if let user = attributes.user { state.byUser[user, default: []].insert(key) }
        }
    }

    func remove(_ key: Key) {
        state.withLock { state in
            guard let attributes = state.clients.removeValue(forKey: key) else { return }
            if let user = attributes.user {
                state.byUser[user]?.remove(key)
                if state.byUser[user]?.isEmpty == true { state.byUser[user] = nil }
            }
        }
    }

    public var count: Int { state.withLock { $0.clients.count } }

    /// The connections `target` reaches now, with their attributes.
    public func resolve(_ target: Target, cohorts: CohortStore) -> [(Key, ClientAttributes)] {
        let candidates: [(Key, ClientAttributes)] = state.withLock { state in
            switch target.scope {
            case .user(let user):
                return (state.byUser[user] ?? []).compactMap { key in state.clients[key].map { (key, $0) } }
            case .users(let users):
                return users.flatMap { user in
                    (state.byUser[user] ?? []).compactMap { key in state.clients[key].map { (key, $0) } }
                }
            case .cohort, .all:
                return state.clients.map { ($0.key, $0.value) }
            }
        }
        return candidates.filter { target.matches($0.1, cohorts: cohorts) }
    }

    /// The connections of `user` (every one if nil).
    public func clients(user: String?) -> [ClientAttributes] {
        state.withLock { state in
            guard let user else { return Array(state.clients.values) }
            return (state.byUser[user] ?? []).compactMap { state.clients[$0] }
        }.sorted { $0.connectedAt < $1.connectedAt }
    }
}

@available(*, unavailable)
extension OnlineIndex.State: Sendable {}
