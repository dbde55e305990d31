import Synchronization

/// Every screen with its kept versions, shared by all loops; every mutation is journaled and
/// fsynced before it returns (DESIGN §9), and a snapshot replaces the journal every
/// `snapshotEvery` records so that start-up does not replay forever.
///
/// Invariants: versions of a screen are strictly increasing and never reused, even across a
/// delete (the last number is remembered); at most `keepVersions` versions are kept per screen.
public final class ScreenStore: Sendable {
    struct Screen {
        var versions: [ScreenVersion]
        var current: ScreenVersion { versions[versions.count - 1] }
    }

    struct State {
        var screens: [String: Screen] = [:]
        /// The last version number ever used per name, deleted screens included.
        var lastVersion: [String: Int] = [:]
        /// Sequence number of the last journal record applied.
        var seq = 0
        var recordsSinceSnapshot = 0
    }

    public let keepVersions: Int
    public let snapshotEvery: Int
    private let state: Mutex<State>
    private let persistence: ScreenPersistence?

    /// An in-memory store (tests), or one restored from and persisted to `dataDirectory`.
    public init(dataDirectory: String?, keepVersions: Int = 16, snapshotEvery: Int = 1000) throws {
        self.keepVersions = keepVersions
        self.snapshotEvery = snapshotEvery
        var restored = State()
        if let dataDirectory {
            let persistence = try ScreenPersistence(directory: dataDirectory)
            try persistence.restore { record in Self.apply(record, to: &restored, keep: keepVersions) }
            self.persistence = persistence
        } else {
            persistence = nil
        }
        state = Mutex(restored)
    }

    // MARK: - Reads

    public func current(_ name: String) -> ScreenVersion? { state.withLock { $0.screens[name]?.current } }

    public func version(_ name: String, _ version: Int) -> ScreenVersion? {
        state.withLock { $0.screens[name]?.versions.first { $0.version == version } }
    }

    public func history(_ name: String) -> [ScreenVersion]? { state.withLock { $0.screens[name]?.versions } }

    public func list() -> [ScreenVersion] {
        state.withLock { $0.screens.values.map(\.current) }.sorted { $0.name < $1.name }
    }

    // MARK: - Mutations

    /// Publishes `tree` as the next version of `name`.
    /// - Returns: the new version and the one it replaces.
    public func publish(_ name: String, tree: JSONValue, now: Int) throws -> (
        new: ScreenVersion, previous: ScreenVersion?
    ) {
        try state.withLock { state in
            let version = (state.lastVersion[name] ?? 0) + 1
            let record = ScreenRecord.publish(
                seq: state.seq + 1, name: name, version: version, publishedAt: now, tree: tree)
            try persist(record, state: &state)
            let previous = state.screens[name]?.current
            Self.apply(record, to: &state, keep: keepVersions)
            return (state.screens[name]!.current, previous)
        }
    }

    /// Deletes `name` and its history.
    /// - Returns: the version that was current, nil if there was no such screen.
    public func delete(_ name: String) throws -> ScreenVersion? {
        try state.withLock { state in
            guard let current = state.screens[name]?.current else { return nil }
            let record = ScreenRecord.delete(seq: state.seq + 1, name: name)
            try persist(record, state: &state)
            Self.apply(record, to: &state, keep: keepVersions)
            return current
        }
    }

    private func persist(_ record: ScreenRecord, state: inout State) throws {
        guard let persistence else { return }
        try persistence.append(record)
        state.recordsSinceSnapshot += 1
        if state.recordsSinceSnapshot >= snapshotEvery {
            var after = state
            Self.apply(record, to: &after, keep: keepVersions)
            try persistence.snapshot(of: after)
            state.recordsSinceSnapshot = 0
        }
    }

    static func apply(_ record: ScreenRecord, to state: inout State, keep: Int) {
        switch record {
        case .publish(let seq, let name, let version, let publishedAt, let tree):
            let entry = ScreenVersion(name: name, version: version, tree: tree, publishedAt: publishedAt)
            var screen = state.screens[name] ?? Screen(versions: [])
            screen.versions.append(entry)
            if screen.versions.count > keep { screen.versions.removeFirst(screen.versions.count - keep) }
            state.screens[name] = screen
            state.lastVersion[name] = version
            state.seq = seq
        case .delete(let seq, let name):
            state.screens[name] = nil
            state.seq = seq
        case .restoredScreen(let name, let lastVersion, let versions):
            if !versions.isEmpty { state.screens[name] = Screen(versions: versions) }
            state.lastVersion[name] = lastVersion
        case .restoredSeq(let seq):
            state.seq = seq
        }
    }
}

@available(*, unavailable)
extension ScreenStore.State: Sendable {}
