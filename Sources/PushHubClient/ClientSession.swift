import ScreenTree

/// The client side of protocol v1 as a state machine (DESIGN §3–§5, §12): app calls and hub
/// messages in, `Action`s out; no sockets, threads, clocks or storage of its own, so every rule
/// is unit-tested by feeding it messages. `PushHubClient` drives it on one queue.
///
/// Invariants:
/// - A screen's `version`/`hash` are set only together with a tree that hashes to `hash` (or the
///   hub's snapshot, whose hash the hub vouches for); a patch applies only to the version it says
///   it is `from`, else the screen is resubscribed without `have` and later patches are ignored
///   until the snapshot (`resyncing`).
/// - `lastSync` never passes a sync that was received but not yet handed to the app: a restart
///   during a jitter wait gets that sync again (deduped by id while the process lives).
struct ClientSession {
    enum Action: Equatable {
        case send(JSONObject)
        /// Hand a tree to the screen's listeners (then, with auto-rendered, send `rendered`).
        case deliver(screen: String, tree: JSONValue, meta: TreeMeta)
        /// Hand a sync to the app after `sync.delayMs`, then call `syncHandled`.
        case schedule(SyncNotification)
        case emit(ClientEvent)
        /// Write (or with nil, remove) a storage key.
        case store(key: String, value: String?)
    }

    struct Screen {
        var tree: JSONValue?
        var version: Int?
        var hash: String?
        /// The version last handed to listeners.
        var delivered: Int?
        /// The version in storage.
        var stored: Int?
        /// A subscribe without `have` is outstanding: patches cannot apply until its snapshot.
        var resyncing = false
    }

    /// Ids of the last syncs seen, for dedupe (a replay after reconnect repeats some).
    static let rememberedSyncs = 1024

    let app: AppInfo?
    private(set) var screens: [String: Screen] = [:]
    private(set) var live = false
    /// The highest sync seq seen; `lastSync` lags it while syncs wait for their jitter.
    private var syncMax: Int?
    private(set) var lastSync: Int?
    private var seenSyncs: [String] = []
    private var seenSyncSet: Set<String> = []
    private var waitingSyncs: [String: Int] = [:]
    private var pendingSubscribes: [String] = []
    private var pendingRendered: [(screen: String, version: Int)] = []
    private var pendingAcks: [String] = []
    private(set) var stats = ClientStats()

    init(app: AppInfo?, lastSync: Int?) {
        self.app = app
        self.lastSync = lastSync
        syncMax = lastSync
    }

    /// The tree held for `screen` with its version and hash (nil when not subscribed, or while a
    /// resubscribe waits for its snapshot).
    func held(_ screen: String) -> (tree: JSONValue, version: Int, hash: String)? {
        guard let entry = screens[screen], let tree = entry.tree, let version = entry.version, let hash = entry.hash
        else { return nil }
        return (tree, version, hash)
    }

    // MARK: - App calls

    /// Starts following `screen`, from `cached` (a stored tree whose hash checked) if given.
    mutating func subscribe(_ screen: String, cached: (tree: JSONValue, version: Int, hash: String)?) -> [Action] {
        guard screens[screen] == nil else { return [] }
        var entry = Screen()
        var actions: [Action] = []
        if let cached {
            entry.tree = cached.tree
            entry.version = cached.version
            entry.hash = cached.hash
            entry.stored = cached.version
            actions.append(
                .deliver(screen: screen, tree: cached.tree, meta: TreeMeta(version: cached.version, hash: cached.hash, source: .cache)))
        }
        if live { actions.append(subscribeMessage(screen, &entry)) }
        screens[screen] = entry
        return actions
    }

    /// Stops following `screen` (its stored tree stays for the next subscribe).
    mutating func unsubscribe(_ screen: String) -> [Action] {
        guard screens.removeValue(forKey: screen) != nil, live else { return [] }
        return [.send(["type": .string("unsubscribe"), "screen": .string(screen)])]
    }

    mutating func rendered(_ screen: String, version: Int) -> [Action] {
        guard live else {
            pendingRendered.removeAll { $0.screen == screen }
            pendingRendered.append((screen, version))
            return []
        }
        return [.send(Self.renderedMessage(screen, version))]
    }

    /// The app's handlers returned for a scheduled sync: ack it and advance `lastSync`.
    mutating func syncHandled(_ id: String) -> [Action] {
        guard waitingSyncs.removeValue(forKey: id) != nil else { return [] }
        var actions = saveLastSync()
        if live { actions.append(.send(["type": .string("ack"), "sync": .string(id)])) } else { pendingAcks.append(id) }
        return actions
    }

    // MARK: - Connection

    /// The socket opened: the hello to send.
    mutating func opened(token: String?, device: String?) -> [Action] {
        stats.connects += 1
        var hello: JSONObject = ["type": .string("hello"), "protocol": .number(1)]
        if let token { hello["token"] = .string(token) }
        if let device { hello["device"] = .string(device) }
        if let app {
            var fields = JSONObject()
            if let platform = app.platform { fields["platform"] = .string(platform) }
            if let version = app.version { fields["version"] = .string(version) }
            hello["app"] = .object(fields)
        }
        if let lastSync { hello["last_sync"] = .number(Double(lastSync)) }
        return [.send(hello)]
    }

    /// The socket closed: what was in flight on it is void.
    mutating func closed() {
        live = false
        pendingSubscribes = []
    }

    // MARK: - Hub messages

    /// One message from the hub; a `fatal` error means reconnecting cannot help.
    mutating func receive(_ message: JSONValue) -> (actions: [Action], fatal: HubError?) {
        switch message["type"]?.stringValue {
        case "welcome": return (welcome(message), nil)
        case "snapshot", "patch", "unchanged": return (screenMessage(message), nil)
        case "gone":
            guard let screen = message["screen"]?.stringValue else { return ([], nil) }
            answered(screen)
            guard screens.removeValue(forKey: screen) != nil else { return ([], nil) }
            return ([.store(key: Self.screenKey(screen), value: nil), .emit(.gone(screen: screen))], nil)
        case "sync": return (sync(message), nil)
        case "error": return error(message)
        default: return ([], nil)  // a newer hub's message: ignored (forward compatibility)
        }
    }

    private mutating func welcome(_ message: JSONValue) -> [Action] {
        let welcome = Welcome(
            session: message["session"]?.stringValue ?? "", user: message["user"]?.stringValue,
            heartbeatSeconds: message["heartbeat_s"]?.intValue ?? 0, syncSeq: message["sync_seq"]?.intValue ?? 0)
        live = true
        stats.welcomes += 1
        var actions: [Action] = []
        if syncMax == nil, let seq = message["sync_seq"]?.intValue {
            syncMax = seq
            actions += saveLastSync()
        }
        actions.append(.emit(.welcome(welcome)))
        for screen in screens.keys.sorted() {
            guard var entry = screens[screen] else { continue }
            actions.append(subscribeMessage(screen, &entry))
            screens[screen] = entry
        }
        for (screen, version) in pendingRendered { actions.append(.send(Self.renderedMessage(screen, version))) }
        pendingRendered = []
        for id in pendingAcks { actions.append(.send(["type": .string("ack"), "sync": .string(id)])) }
        pendingAcks = []
        return actions
    }

    private mutating func subscribeMessage(_ screen: String, _ entry: inout Screen) -> Action {
        var message: JSONObject = ["type": .string("subscribe"), "screen": .string(screen)]
        if let version = entry.version, let hash = entry.hash {
            message["have"] = .object(["version": .number(Double(version)), "hash": .string(hash)])
        } else {
            entry.resyncing = true
        }
        pendingSubscribes.append(screen)
        return .send(message)
    }

    private mutating func answered(_ screen: String) {
        if let index = pendingSubscribes.firstIndex(of: screen) { pendingSubscribes.remove(at: index) }
    }

    private mutating func screenMessage(_ message: JSONValue) -> [Action] {
        guard let screen = message["screen"]?.stringValue, let version = message["version"]?.intValue,
            let hash = message["hash"]?.stringValue
        else { return [] }
        answered(screen)
        guard var entry = screens[screen] else { return [] }  // unsubscribed meanwhile
        defer { screens[screen] = entry }
        switch message["type"]?.stringValue {
        case "snapshot":
            stats.snapshots += 1
            let tree = message["tree"] ?? .null
            var actions: [Action] = []
            let canonical = JSONWriter.write(tree)
            let actual = ScreenHash.of(canonical: canonical)
            if actual != hash {
                // The hub is the authority on the tree; differing hashes mean the two canonical
                // forms disagree, and resubscribing would loop. Keep the hub's hash for `have`.
                actions.append(
                    .emit(.mismatch(screen: screen, version: version, expected: hash, actual: actual, source: .snapshot)))
            }
            entry.resyncing = false
            return actions
                + accept(&entry, screen, tree, TreeMeta(version: version, hash: hash, source: .snapshot), canonical)
        case "unchanged":
            stats.unchanged += 1
            guard let tree = entry.tree else { return resubscribe(&entry, screen, .noTree, message) }
            entry.resyncing = false
            return accept(&entry, screen, tree, TreeMeta(version: version, hash: hash, source: .unchanged), nil)
        default:
            stats.patches += 1
            if entry.resyncing { return [] }  // sent before our resubscribe: the snapshot follows
            guard let tree = entry.tree, entry.version == message["from"]?.intValue else {
                return resubscribe(&entry, screen, .unexpectedFrom, message)
            }
            let patch: JSONPatch
            let patched: JSONValue
            do {
                patch = try JSONPatch(json: message["ops"] ?? .null)
                patched = try patch.apply(to: tree)
            } catch {
                return resubscribe(&entry, screen, .patchFailed, message)
            }
            let canonical = JSONWriter.write(patched)
            let actual = ScreenHash.of(canonical: canonical)
            guard actual == hash else {
                let mismatch = Action.emit(
                    .mismatch(screen: screen, version: version, expected: hash, actual: actual, source: .patch))
                return [mismatch] + resubscribe(&entry, screen, .hashMismatch, message)
            }
            let meta = TreeMeta(version: version, hash: hash, source: .patch, from: entry.version, patch: patch)
            return accept(&entry, screen, patched, meta, canonical)
        }
    }

    private mutating func resubscribe(_ entry: inout Screen, _ screen: String, _ reason: ResubscribeReason, _ message: JSONValue)
        -> [Action]
    {
        stats.resubscribes += 1
        let event = ClientEvent.resubscribe(
            screen: screen, reason: reason, held: entry.version, from: message["from"]?.intValue,
            version: message["version"]?.intValue)
        entry.version = nil  // keep `tree` for the app until the snapshot replaces it
        entry.hash = nil
        guard live else { return [.emit(event)] }
        return [.emit(event), subscribeMessage(screen, &entry)]
    }

    /// Holds `tree` as `meta.version`, stores it when that version is not stored yet (from its
    /// `canonical` bytes when the caller has them), and hands it over when it is new to the app.
    private func accept(_ entry: inout Screen, _ screen: String, _ tree: JSONValue, _ meta: TreeMeta, _ canonical: [UInt8]?)
        -> [Action]
    {
        let (version, hash, source) = (meta.version, meta.hash, meta.source)
        var actions: [Action] = []
        let changed = entry.delivered != version || source == .snapshot || entry.tree != tree
        entry.tree = tree
        entry.version = version
        entry.hash = hash
        if entry.stored != version || source == .snapshot {
            entry.stored = version
            let stored = Self.storedForm(canonical: canonical ?? JSONWriter.write(tree), version, hash)
            actions.append(.store(key: Self.screenKey(screen), value: stored))
        }
        guard changed else { return actions }
        entry.delivered = version
        actions.append(.deliver(screen: screen, tree: tree, meta: meta))
        return actions
    }

    private mutating func sync(_ message: JSONValue) -> [Action] {
        stats.syncs += 1
        guard let id = message["id"]?.stringValue else { return [] }
        guard seenSyncSet.insert(id).inserted else {
            stats.duplicateSyncs += 1
            return []
        }
        seenSyncs.append(id)
        if seenSyncs.count > Self.rememberedSyncs { seenSyncSet.remove(seenSyncs.removeFirst()) }
        let seq = message["seq"]?.intValue ?? 0
        if seq > (syncMax ?? -1) { syncMax = seq }
        waitingSyncs[id] = seq
        let jitter = max(0, message["jitter_ms"]?.intValue ?? 0)
        return [
            .schedule(
                SyncNotification(
                    id: id, seq: seq, reason: message["reason"]?.stringValue ?? "",
                    scope: message["scope"]?.stringValue ?? "", hint: message["hint"],
                    mandatory: message["mandatory"] == .bool(true), jitterMs: jitter, delayMs: 0))
        ]
    }

    private mutating func error(_ message: JSONValue) -> ([Action], HubError?) {
        var error = HubError(
            code: message["code"]?.stringValue ?? "error", message: message["message"]?.stringValue ?? "",
            ref: message["ref"]?.stringValue, screen: nil)
        var actions: [Action] = []
        if error.ref == "subscribe", !pendingSubscribes.isEmpty {
            // A refused subscribe (unknown_screen, invalid_screen_name) did not subscribe: the
            // entry and its stored tree go, so subscribing again (once published) asks again.
            let screen = pendingSubscribes.removeFirst()
            error.screen = screen
            if screens.removeValue(forKey: screen) != nil { actions.append(.store(key: Self.screenKey(screen), value: nil)) }
        }
        actions.append(.emit(.error(error)))
        let fatal = error.code == "unsupported_protocol" || error.code == "unauthorized"
        return (actions, fatal ? error : nil)
    }

    /// `last_sync` = every sync up to it was handed to the app.
    private mutating func saveLastSync() -> [Action] {
        guard var value = syncMax else { return [] }
        for seq in waitingSyncs.values where seq - 1 < value { value = seq - 1 }
        guard value != lastSync else { return [] }
        lastSync = value
        return [.store(key: Self.lastSyncKey, value: String(value))]
    }

    // MARK: - Storage form

    static let lastSyncKey = "last_sync"
    static let deviceKey = "device"
    static func screenKey(_ screen: String) -> String { "screen:" + screen }

    /// A screen as stored: `{"hash","tree","version"}` in canonical form (the JavaScript client's too).
    static func storedForm(canonical tree: [UInt8], _ version: Int, _ hash: String) -> String {
        // Members in canonical order around the tree's canonical bytes (written once per version).
        var bytes = Array(#"{"hash":"#.utf8)
        bytes += JSONWriter.write(.string(hash))
        bytes += Array(#","tree":"#.utf8)
        bytes += tree
        bytes += Array(#","version":\#(version)}"#.utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A stored screen whose tree still hashes to its hash; nil otherwise (then it is dropped).
    static func parseStored(_ text: String) -> (tree: JSONValue, version: Int, hash: String)? {
        // Unreadable is as good as absent: the hub sends a snapshot.
        guard let value = try? JSONReader.parse(text), let tree = value["tree"],
            let version = value["version"]?.intValue, let hash = value["hash"]?.stringValue, ScreenHash.of(tree) == hash
        else { return nil }
        return (tree, version, hash)
    }

    private static func renderedMessage(_ screen: String, _ version: Int) -> JSONObject {
        ["type": .string("rendered"), "screen": .string(screen), "version": .number(Double(version))]
    }
}
