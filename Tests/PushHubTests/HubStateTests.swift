import Foundation
import Testing

@testable import PushHub

/// The control plane's state and its one journaled store (`HubState`, `StateJournal`).
@Suite struct HubStateTests {
    static func directory() -> String { NSTemporaryDirectory() + "pushhub-state-\(UUID().uuidString)" }

    /// A state with its journal, as the control plane keeps them.
    struct Store {
        var state: HubState
        let journal: StateJournal

        init(_ directory: String, keepVersions: Int = 4, snapshotEvery: Int = 1000) throws {
            var state = HubState(keepVersions: keepVersions)
            journal = try StateJournal(directory: directory, snapshotEvery: snapshotEvery)
            try journal.restore { state.apply($0) }
            self.state = state
        }

        /// Applies and commits `records` together (one group commit), snapshotting when due.
        mutating func commit(_ records: [HubRecord]) throws {
            for record in records {
                journal.append(record)
                state.apply(record)
            }
            _ = try journal.commit()
            if journal.isSnapshotDue { try journal.writeSnapshot(state.snapshotRecords()) }
        }

        mutating func publish(_ name: String, _ tree: JSONValue) throws {
            try commit([
                .screenPublished(
                    ScreenVersion(name: name, version: state.nextVersion(of: name), tree: tree, publishedAt: 0))
            ])
        }
    }

    @Test("a large state is snapshotted after as many records as its last snapshot held, not every N")
    func snapshotsScaleWithTheState() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var store = try Store(directory, snapshotEvery: 10)
        func device(_ n: Int) -> HubRecord {
            .pushDeviceSet(
                PushDevice(
                    user: "u\(n)", device: "d", provider: .fcm, token: "t\(n)", topic: nil, platform: "android",
                    appVersion: nil, claimCohorts: [], claims: [:], updatedAt: n))
        }
        var snapshots: [Int] = []  // the records in each snapshot written, read back from its file
        func snapshotSize() throws -> Int { try Snapshot.read(path: directory + "/state.snapshot")?.records.count ?? 0 }
        var last = 0
        for n in 1...400 {
            try store.commit([device(n)])
            let size = try snapshotSize()
            if size != last {
                snapshots.append(size)
                last = size
            }
        }
        // After 10 records, then each snapshot waits for as many records as the one before held (a
        // snapshot holds the devices and one `sync_numbered` record): 11, then 11 more, and so on.
        #expect(snapshots == [11, 22, 44, 88, 176, 352], "\(snapshots)")
        let restored = try Store(directory, snapshotEvery: 10)
        #expect(restored.state.devices.count == 400)
    }

    @Test("versions increase, only the last N are kept, and numbering survives a delete")
    func versions() throws {
        var state = HubState(keepVersions: 3)
        for n in 1...5 {
            state.apply(
                .screenPublished(
                    ScreenVersion(
                        name: "s", version: state.nextVersion(of: "s"), tree: .number(Double(n)), publishedAt: n)))
        }
        #expect(state.view.current("s")?.version == 5)
        #expect(state.view.screens["s"]?.map(\.version) == [3, 4, 5])
        #expect(state.view.version("s", 2) == nil)
        state.apply(.screenDeleted("s"))
        #expect(state.view.current("s") == nil)
        #expect(state.nextVersion(of: "s") == 6)
    }

    @Test("a restart restores every kind of record from snapshot + journal, replaying nothing twice")
    func restart() throws {
        let directory = Self.directory()
        let rule = try CohortRule(json: .object(["platform": .string("ios")]))
        let experiment = try Experiment(
            key: "e", json: try JSONReader.parse(#"{"status":"running","sticky":true,"variants":[{"key":"A"}]}"#))
        do {
            var store = try Store(directory, snapshotEvery: 5)
            for n in 1...12 { try store.publish("a", .object(["n": .number(Double(n))])) }
            try store.publish("b", .string("b1"))
            try store.commit([.screenDeleted("b")])
            try store.commit([
                .cohortSet("beta", Cohort(users: ["u1", "u2"], rule: rule)),
                .cohortUsersEdited("beta", add: ["u3"], remove: ["u1"]), .experimentPut(experiment),
                .stickyAssigned(experiment: "e", unit: "u9", variant: "A"),
                .adminTokenCreated(AdminToken(name: "ci", scopes: [.publish, .sync], digest: "ab", createdAt: 1)),
                .adminTokenCreated(AdminToken(name: "gone", scopes: [.read], digest: "cd", createdAt: 2)),
                .adminTokenRevoked("gone"),
            ])
            try store.publish("c", .bool(true))
        }
        #expect(FileManager.default.fileExists(atPath: directory + "/state.snapshot"))
        var restored = try Store(directory, snapshotEvery: 5)
        let view = restored.state.view
        #expect(view.current("a")?.version == 12)
        #expect(view.screens["a"]?.map(\.version) == [9, 10, 11, 12])
        #expect(view.current("a")?.tree == .object(["n": .number(12)]))
        #expect(view.current("b") == nil)
        #expect(restored.state.nextVersion(of: "b") == 2)
        #expect(view.current("c")?.tree == .bool(true))
        #expect(view.cohorts["beta"]?.users == ["u2", "u3"] && view.cohorts["beta"]?.rule == rule)
        #expect(view.experiments.all["e"] == experiment)
        #expect(view.sticky["e"]?["u9"] == "A")
        #expect(restored.state.adminTokens.keys.sorted() == ["ci"])
        #expect(restored.state.adminTokens["ci"]?.scopes == [.publish, .sync])
        try restored.publish("c", .null)
        #expect(try Store(directory).state.view.current("c")?.version == 2)
    }

    @Test("a group commit makes every record of the batch durable with one fsync")
    func groupCommit() throws {
        let directory = Self.directory()
        let journal = try StateJournal(directory: directory)
        for n in 1...50 {
            journal.append(
                .screenPublished(ScreenVersion(name: "g", version: n, tree: .number(Double(n)), publishedAt: 0)))
        }
        #expect(try journal.commit() == 50)
        #expect(try Store(directory).state.view.current("g")?.version == 50)
    }

    @Test("a journal record that is cut short is dropped; corruption before the tail stops the restore")
    func tornAndCorrupt() throws {
        let directory = Self.directory()
        do {
            var store = try Store(directory)
            for n in 1...3 { try store.publish("a", .number(Double(n))) }
        }
        let journal = directory + "/state.journal"
        var bytes = try #require(try FileBytes.read(journal))
        let intact = bytes
        bytes += [9, 0, 0, 0, 1, 2]
        try FileBytes.writeAtomically(bytes, to: journal)
        #expect(try Store(directory).state.view.current("a")?.version == 3)
        #expect(try FileBytes.read(journal) == intact)  // the torn tail was cut off
        bytes = intact
        bytes[10] ^= 0xFF
        try FileBytes.writeAtomically(bytes, to: journal)
        #expect(throws: Journal.Corruption.self) { try Store(directory) }
    }

    @Test("a record that no longer decodes stops the start, naming the file and its offset")
    func undecodableRecord() throws {
        let directory = Self.directory()
        do {
            var store = try Store(directory)
            try store.publish("a", .number(1))
        }
        let journal = try Journal(path: directory + "/state.journal")
        let first = try #require(try FileBytes.read(directory + "/state.journal")).count
        try journal.append([Array(#"{"kind":"screen_renamed","lsn":2}"#.utf8)])
        let error = try #require(throws: Journal.Corruption.self) { try Store(directory) }
        #expect(error.offset == first && error.path.hasSuffix("state.journal"))
        #expect(error.description.contains("unknown record kind \"screen_renamed\""))
    }

    @Test("a data dir of the earlier per-store layout is refused with a message, not read as empty")
    func legacyLayout() throws {
        let directory = Self.directory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileBytes.writeAtomically([], to: directory + "/screens.journal")
        #expect(throws: StateJournal.UnsupportedLayout.self) { try StateJournal(directory: directory) }
    }
}

@Suite struct DataDirectoryTests {
    @Test("secrets are generated once and read back; one that exists but cannot be read stops the start")
    func secrets() throws {
        let directory = NSTemporaryDirectory() + "pushhub-secrets-\(UUID().uuidString)"
        let first = try DataDirectory(path: directory).prepare()
        #expect(Set(first.generated) == ["admin.token", "jwt.secret"])
        let again = try DataDirectory(path: directory).prepare()
        #expect(again.generated.isEmpty && again.adminToken == first.adminToken)
        // A secret that is there but unreadable (here: not UTF-8) is never replaced.
        let other = NSTemporaryDirectory() + "pushhub-secrets-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try FileBytes.writeAtomically([0xFF, 0xFE, 0x00], to: other + "/admin.token")
        #expect(throws: (any Error).self) { try DataDirectory(path: other).prepare() }
        #expect(try FileBytes.read(other + "/admin.token") == [0xFF, 0xFE, 0x00])
    }
}

/// A hub that reloads the shared snapshot brings its loops to it with `changes(toReach:)`.
@Suite struct HubStateReloadTests {
    static func version(_ name: String, _ number: Int, _ n: Int) -> HubRecord {
        .screenPublished(
            ScreenVersion(name: name, version: number, tree: .object(["n": .number(Double(n))]), publishedAt: 0))
    }

    static func sync(_ seq: Int) -> HubRecord {
        .syncAppended(
            Sync(
                seq: seq, target: Target(scope: .all), reason: "r\(seq)", scope: "bundle", hint: nil, collapse: nil,
                mandatory: false, createdAt: 0, expiresAt: Int.max / 2, spreadMilliseconds: 0, jitterMilliseconds: 0))
    }

    @Test("a loop that applies the changes sees what the snapshot holds, with a new experiment generation")
    func reachesTheSnapshot() {
        let layout = AssignmentTests.layout
        var old = HubState(keepVersions: 4)
        var new = HubState(keepVersions: 4)
        let shared: [HubRecord] = [
            Self.version("home", 1, 0), Self.version("gone", 1, 0), Self.version("same", 1, 0),
            .cohortSet("beta", Cohort(users: ["u1"], rule: nil)), .cohortSet("kept", Cohort(users: ["u9"], rule: nil)),
            .experimentPut(layout), Self.sync(1),
        ]
        for record in shared {
            old.apply(record)
            new.apply(record)
        }
        // What the other hubs did while this one was behind.
        for record in [
            Self.version("home", 2, 1), Self.version("home", 3, 2), .screenDeleted("gone"), Self.version("fresh", 1, 7),
            .cohortUsersEdited("beta", add: ["u2"], remove: []), .cohortDeleted("kept"),
            .stickyAssigned(experiment: layout.key, unit: "u5", variant: "compact"), Self.sync(2), Self.sync(3),
        ] as [HubRecord] {
            new.apply(record)
        }
        var changedExperiment = layout
        changedExperiment.salt = "2020"
        new.apply(.experimentPut(changedExperiment))
        let component = try! Component(name: "Carousel", body: .object(["versions": .object(["1": .object([:])])]))
        new.apply(.componentPut(component, at: 5))
        new.apply(
            .appProfilePut(
                AppProfile(
                    platform: "ios", appVersion: SemanticVersion("5.0.0")!, components: DeclaredComponents([:]),
                    updatedAt: 6)))

        let (changes, target) = old.changes(toReach: new)
        var loop = old.view
        for change in changes { loop.apply(change, keepVersions: 4) }
        #expect(loop.screens.mapValues { $0.last!.version } == target.view.screens.mapValues { $0.last!.version })
        #expect(loop.screens["home"]!.map(\.version) == [1, 2, 3])
        #expect(loop.screens["gone"] == nil && loop.screens["fresh"]?.last?.tree == .object(["n": .number(7)]))
        #expect(loop.cohorts["beta"]?.users == ["u1", "u2"] && loop.cohorts["kept"] == nil)
        #expect(loop.experiments.all == new.view.experiments.all)
        #expect(loop.experiments.generation > old.view.experiments.generation)
        #expect(target.view.experiments === loop.experiments)
        #expect(loop.sticky == new.view.sticky)
        #expect(loop.syncs.syncs.map(\.seq) == [1, 2, 3] && loop.syncs.lastSeq == 3)
        #expect(loop.components == new.view.components && loop.components.components["Carousel"] != nil)
        #expect(loop.components.profile("ios", for: SemanticVersion("5.1.0")) != nil)
        // Nothing for what did not change: the same screen, the same cohort.
        #expect(!changes.contains { if case .screenPublished(let v, _) = $0 { v.name == "same" } else { false } })
        // The registry is sent once, whole, only when it differs, and first: versions published
        // meanwhile are rendered with it.
        #expect(changes.filter { if case .componentsChanged = $0 { true } else { false } }.count == 1)
        #expect({ if case .componentsChanged = changes.first { true } else { false } }())
        #expect(!new.changes(toReach: new).changes.contains { if case .componentsChanged = $0 { true } else { false } })
    }
}
