import Synchronization

/// Every screen with its kept versions, shared by all loops; every mutation is journaled and
/// fsynced before it returns (DESIGN §9), and a snapshot replaces the journal every
/// `snapshotEvery` records so that start-up does not replay forever (`RecordLog`).
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
    }

    public let keepVersions: Int
    private let state: Mutex<State>
    private let log: RecordLog?

    /// An in-memory store (tests), or one restored from and persisted to `dataDirectory`
    /// (`screens.journal`, `screens.snapshot.json`).
    public init(dataDirectory: String?, keepVersions: Int = 16, snapshotEvery: Int = 1000) throws {
        self.keepVersions = keepVersions
        var restored = State()
        if let dataDirectory {
            let log = try RecordLog(directory: dataDirectory, name: "screens", snapshotEvery: snapshotEvery)
            try log.restore(
                snapshot: { json in Self.restore(snapshot: json, into: &restored) },
                record: { json in Self.apply(json, to: &restored, keep: keepVersions) })
            self.log = log
        } else {
            log = nil
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
            let record = JSONValue.object([
                "op": .string("publish"), "screen": .string(name), "version": .number(Double(version)),
                "at": .number(Double(now)), "tree": tree,
            ])
            try persist(record, state: state)
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
            let record = JSONValue.object(["op": .string("delete"), "screen": .string(name)])
            try persist(record, state: state)
            Self.apply(record, to: &state, keep: keepVersions)
            return current
        }
    }

    private func persist(_ record: JSONValue, state: State) throws {
        try log?.append(record) {
            var after = state
            Self.apply(record, to: &after, keep: keepVersions)
            return Self.snapshot(after)
        }
    }

    // MARK: - Records and snapshots

    static func apply(_ record: JSONValue, to state: inout State, keep: Int) {
        guard let name = record["screen"]?.stringValue else { return }
        switch record["op"]?.stringValue {
        case "publish":
            guard let version = record["version"]?.intValue, let at = record["at"]?.intValue, let tree = record["tree"]
            else { return }
            var screen = state.screens[name] ?? Screen(versions: [])
            screen.versions.append(ScreenVersion(name: name, version: version, tree: tree, publishedAt: at))
            if screen.versions.count > keep { screen.versions.removeFirst(screen.versions.count - keep) }
            state.screens[name] = screen
            state.lastVersion[name] = version
        case "delete":
            state.screens[name] = nil
        default:
            break
        }
    }

    static func snapshot(_ state: State) -> JSONValue {
        .object([
            "screens": .array(
                state.lastVersion.keys.sorted().map { name in
                    .object([
                        "name": .string(name), "last_version": .number(Double(state.lastVersion[name]!)),
                        "versions": .array(
                            (state.screens[name]?.versions ?? []).map {
                                .object([
                                    "version": .number(Double($0.version)), "at": .number(Double($0.publishedAt)),
                                    "tree": $0.tree,
                                ])
                            }),
                    ])
                })
        ])
    }

    static func restore(snapshot json: JSONValue, into state: inout State) {
        for screen in json["screens"]?.arrayValue ?? [] {
            guard let name = screen["name"]?.stringValue, let last = screen["last_version"]?.intValue else { continue }
            let versions = (screen["versions"]?.arrayValue ?? []).compactMap { entry -> ScreenVersion? in
                guard let version = entry["version"]?.intValue, let at = entry["at"]?.intValue, let tree = entry["tree"]
                else { return nil }
                return ScreenVersion(name: name, version: version, tree: tree, publishedAt: at)
            }
            if !versions.isEmpty { state.screens[name] = Screen(versions: versions) }
            state.lastVersion[name] = last
        }
    }
}

@available(*, unavailable)
extension ScreenStore.State: Sendable {}
