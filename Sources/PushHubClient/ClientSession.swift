import ScreenTree

/// The client side of protocol v1 as a state machine (DESIGN §3–§5, §12): app calls and hub
/// messages in, `Action`s out; no sockets, threads, clocks or storage of its own (`now` is a
/// parameter, stored values come in as arguments), so every rule is unit-tested by feeding it
/// messages. `PushHubClient` drives it on one queue.
///
/// Invariants:
/// - Everything it reads or stores is in one user's `scope`, and a stored tree or `last_sync` is
///   used only in the hub state (`epoch`) it was counted in: another user's or another epoch's
///   tree is never delivered or sent as `have` (subscribes go out only after the welcome has
///   named the epoch).
/// - A screen's `version`/`hash` are set only together with a tree that hashes to `hash` (or the
///   hub's snapshot, whose hash the hub vouches for); a patch applies only to the version it says
///   it is `from`, else the screen is resubscribed without `have` and later patches are ignored
///   until the snapshot (`resyncing`).
/// - `lastSync` never passes a sync that was received but not yet handed to the app: a restart
///   during a jitter wait gets that sync again (deduped by id while the process lives).
/// - A screen's `variants` are those of the rendition its `hash` is of: set with every snapshot
///   and `unchanged`, replaced by a patch that names them, stored with the tree.
/// - `track` events wait only while not live, at most `maxQueuedTracks` of them, and are sent
///   only in the scope (user) they were made in.
/// - While not live, at most one render report (`rendered` or `render_error`) per screen is owed:
///   the latest made. Owed reports go after the next welcome, in the scope and hub state they
///   were made in only.
/// - A sync is handed to the app at most once per id, whether it came over the socket or in a
///   push (DESIGN §17); the ids of the last `rememberedHandledSyncs` handled are stored, so a
///   restart does not hand them again. A push never moves `lastSync`: only the socket's replay of
///   the same sync (deduped) does, so syncs missed over the socket are still replayed.
/// - The push token, when there is one, is sent after every welcome and at once when set while live.
struct ClientSession {
    enum Action: Equatable {
        case send(JSONObject)
        /// Hand a tree to the screen's listeners; then, unless it is from `.cache`, report a
        /// listener's error (`renderFailed`) or, with auto-rendered, that it was drawn (`rendered`).
        case deliver(screen: String, tree: JSONValue, meta: TreeMeta)
        /// Hand a sync to the app after `sync.delayMs`, then call `syncHandled`.
        case schedule(SyncNotification)
        case emit(ClientEvent)
        /// The hub has no version of the screen yet: tell its subscriptions (`onPending`); the
        /// subscription stays, and its first publish brings the tree (a `.snapshot`).
        case pending(screen: String)
        /// Write (or with nil, remove) a storage key.
        case store(key: String, value: String?)
    }

    struct Screen {
        var tree: JSONValue?
        var version: Int?
        var hash: String?
        /// The experiments that shaped the held tree: experiment key → variant key.
        var variants: [String: String] = [:]
        /// The version last handed to listeners.
        var delivered: Int?
        /// The version in storage.
        var stored: Int?
        /// A subscribe without `have` is outstanding: patches cannot apply until its snapshot.
        var resyncing = false
        /// The hub said `pending`: the screen has no version yet; its first publish brings a snapshot.
        var pending = false
    }

    /// Ids of the last syncs seen, for dedupe (a replay after reconnect repeats some).
    static let rememberedSyncs = 1024
    /// `track` events kept while not connected; beyond it the oldest goes (docs/clients.md).
    static let maxQueuedTracks = 100
    /// Ids of handled syncs kept in storage (`<scope>:syncs`), so that a push and the socket's
    /// replay of the same sync reach the app once across restarts too.
    static let rememberedHandledSyncs = 64

    let app: AppInfo?
    /// What this build renders, for the hello (checked by `PushHubClient.init`); nil: not declared.
    let components: [String: Int]?
    private(set) var screens: [String: Screen] = [:]
    private(set) var live = false
    /// Whose storage: every key this session reads or stores is inside it.
    private(set) var scope: StorageScope
    /// The hub state the scope's stored screens and `last_sync` belong to (nil: none known yet).
    private(set) var epoch: String?
    private(set) var liveness = LinkLiveness()
    /// The highest sync seq seen; `lastSync` lags it while syncs wait for their jitter.
    private var syncMax: Int?
    private(set) var lastSync: Int?
    private var seenSyncs: [String] = []
    private var seenSyncSet: Set<String> = []
    private var waitingSyncs: [String: Int] = [:]
    /// Syncs from pushes waiting for the app: they hold `lastSync` back only once the socket
    /// brought them too (then they move to `waitingSyncs`).
    private var waitingPushes: Set<String> = []
    /// The ids of the last handled syncs, oldest first, as stored.
    private(set) var handledSyncs: [String] = []
    /// The device's push token (nil: none), sent after every welcome.
    private(set) var pushToken: PushToken?
    /// The token was removed while not live: `{"token":null}` goes after the next welcome.
    private var owesPushTokenRemoval = false
    private var pendingSubscribes: [String] = []
    /// The latest `rendered` or `render_error` made per screen while not live, oldest screen first.
    private var owedReports: [(screen: String, message: JSONObject)] = []
    private var pendingAcks: [String] = []
    private(set) var pendingTracks: [Track] = []
    /// The client was closed for good (`close()`, or a refusal reconnecting cannot fix).
    private(set) var ended = false
    private(set) var stats = ClientStats()

    /// A session in `scope` whose storage holds `record` (its epoch and `last_sync`), the ids of
    /// the syncs it handled last (`handled`, oldest first) and the device's `pushToken`.
    init(
        app: AppInfo?, components: [String: Int]? = nil, scope: StorageScope,
        record: ScopeRecord = ScopeRecord(epoch: nil, lastSync: nil), handled: [String] = [],
        pushToken: PushToken? = nil
    ) {
        self.app = app
        self.components = components
        self.scope = scope
        self.pushToken = pushToken
        epoch = record.epoch
        lastSync = record.lastSync
        syncMax = record.lastSync
        remember(handled: handled)
    }

    /// The tree held for `screen` with its version and hash (nil when not subscribed, or while a
    /// resubscribe waits for its snapshot).
    func held(_ screen: String) -> StoredScreen? {
        guard let entry = screens[screen], let tree = entry.tree, let version = entry.version, let hash = entry.hash
        else { return nil }
        return StoredScreen(tree: tree, version: version, hash: hash, epoch: epoch, variants: entry.variants)
    }

    /// Whether a stored screen may be shown and sent as `have`: it was stored in the epoch this
    /// scope is in (a screen stored without one, by a fetch before any session, may not).
    func isCurrent(_ stored: StoredScreen) -> Bool { stored.epoch != nil && stored.epoch == epoch }

    // MARK: - App calls

    /// Starts following `screen`, from `stored` (what storage holds for it, hash checked) when it
    /// is of this scope's epoch; otherwise that entry is removed.
    mutating func subscribe(_ screen: String, stored: StoredScreen?) -> [Action] {
        guard screens[screen] == nil else { return [] }
        var entry = Screen()
        var actions = start(screen, &entry, from: stored)
        if live { actions.append(subscribeMessage(screen, &entry)) }
        screens[screen] = entry
        return actions
    }

    /// Holds and delivers `stored` as the cache of `screen` if it is current, else drops it from storage.
    private func start(_ screen: String, _ entry: inout Screen, from stored: StoredScreen?) -> [Action] {
        guard let stored else { return [] }
        guard isCurrent(stored) else { return [.store(key: scope.screenKey(screen), value: nil)] }
        entry.tree = stored.tree
        entry.version = stored.version
        entry.hash = stored.hash
        entry.variants = stored.variants
        entry.stored = stored.version
        let meta = TreeMeta(version: stored.version, hash: stored.hash, source: .cache, variants: stored.variants)
        return [.deliver(screen: screen, tree: stored.tree, meta: meta)]
    }

    /// Makes `scope` the user whose storage the session uses (the token now names another user):
    /// its `record`, and for each subscribed screen its `stored` tree when current. What was held
    /// for the previous user is forgotten, never delivered or sent as `have` for this one.
    mutating func enter(
        _ scope: StorageScope, record: ScopeRecord, handled: [String] = [], stored: [String: StoredScreen]
    ) -> [Action] {
        guard scope != self.scope else { return [] }
        self.scope = scope
        epoch = record.epoch
        forgetSyncs()
        remember(handled: handled)
        // Events the previous user made are theirs: never sent signed in as this one.
        stats.droppedTracks += pendingTracks.count
        pendingTracks = []
        lastSync = record.lastSync
        syncMax = record.lastSync
        var actions: [Action] = []
        for screen in screens.keys.sorted() {
            var entry = Screen()
            actions += start(screen, &entry, from: stored[screen])
            screens[screen] = entry
        }
        return actions
    }

    /// Stops following `screen` (its stored tree stays for the next subscribe).
    mutating func unsubscribe(_ screen: String) -> [Action] {
        guard screens.removeValue(forKey: screen) != nil, live else { return [] }
        return [.send(["type": .string("unsubscribe"), "screen": .string(screen)])]
    }

    /// The app drew `version` of `screen` (confirms experiment exposures, DESIGN §6).
    mutating func rendered(_ screen: String, version: Int) -> [Action] {
        sendReport(
            screen, ["type": .string("rendered"), "screen": .string(screen), "version": .number(Double(version))])
    }

    /// The app could not draw `version` of `screen` (DESIGN §15): a `render_error` of `report`
    /// with `hash` (nil: the held tree's, when it is that version). Owed as `rendered` is.
    mutating func renderFailed(_ screen: String, version: Int, report: RenderErrorReport, hash: String? = nil)
        -> [Action]
    {
        let held = screens[screen].flatMap { $0.version == version ? $0.hash : nil }
        return sendReport(screen, report.message(screen: screen, version: version, hash: hash ?? held))
    }

    /// Sends a render report while live; otherwise owes it, replacing the one owed for `screen`.
    private mutating func sendReport(_ screen: String, _ message: JSONObject) -> [Action] {
        guard live else {
            owedReports.removeAll { $0.screen == screen }
            owedReports.append((screen, message))
            return []
        }
        return [.send(message)]
    }

    /// The app reports a goal event: sent now when live, else kept (the newest
    /// `maxQueuedTracks`) and sent after the next welcome.
    mutating func track(_ track: Track) -> [Action] {
        guard !ended else {
            stats.droppedTracks += 1
            return []
        }
        guard live else {
            pendingTracks.append(track)
            let excess = pendingTracks.count - Self.maxQueuedTracks
            if excess > 0 {
                pendingTracks.removeFirst(excess)
                stats.droppedTracks += excess
            }
            return []
        }
        stats.tracks += 1
        return [.send(track.message)]
    }

    /// The app's handlers returned for a scheduled sync: ack it, remember its id and (for one the
    /// socket brought) advance `lastSync`.
    mutating func syncHandled(_ id: String) -> [Action] {
        var actions: [Action]
        if waitingSyncs.removeValue(forKey: id) != nil {
            actions = saveLastSync()
        } else if waitingPushes.remove(id) != nil {
            actions = []
        } else {
            return []  // of another user or hub state: this hub does not know its id
        }
        handledSyncs.append(id)
        if handledSyncs.count > Self.rememberedHandledSyncs { handledSyncs.removeFirst() }
        actions.append(storeHandledSyncs())
        if live { actions.append(.send(["type": .string("ack"), "sync": .string(id)])) } else { pendingAcks.append(id) }
        return actions
    }

    /// The app set (or with nil, removed) the device's push token: stored, and sent now when
    /// live (else after the next welcome). Setting the token held changes nothing.
    mutating func setPushToken(_ token: PushToken?) -> [Action] {
        guard token != pushToken else { return [] }
        let hadToken = pushToken != nil
        pushToken = token
        owesPushTokenRemoval = false
        var actions: [Action] = [.store(key: StorageScope.pushTokenKey, value: token?.stored)]
        if let token {
            if live { actions.append(.send(token.message)) }
        } else if hadToken {
            if live { actions.append(.send(PushToken.removal)) } else { owesPushTokenRemoval = true }
        }
        return actions
    }

    /// A silent push brought `message`, a sync object (DESIGN §17): handed to the app at once (a
    /// push has no jitter: the app runs briefly in the background) unless its id was seen already.
    /// It does not move `lastSync`: syncs before it that the socket missed are still replayed.
    /// - Returns: the `.schedule` of the sync, or nothing when its id was seen already.
    mutating func pushed(_ message: JSONValue) -> [Action] {
        guard let id = message["id"]?.stringValue else { return [] }
        guard seenSyncSet.insert(id).inserted else {
            stats.duplicateSyncs += 1
            return []
        }
        seenSyncs.append(id)
        if seenSyncs.count > Self.rememberedSyncs { seenSyncSet.remove(seenSyncs.removeFirst()) }
        stats.pushedSyncs += 1
        waitingPushes.insert(id)
        return [.schedule(notification(message, id: id, jitterMs: 0))]
    }

    // MARK: - Connection

    /// A connection is being made: from now on it must bring something within the liveness limit.
    mutating func connecting(now: ContinuousClock.Instant) {
        liveness.connecting(now: now)
    }

    /// The socket opened: the hello to send (asking for heartbeats; with the epoch `last_sync`
    /// was counted in).
    mutating func opened(token: String?, device: String?) -> [Action] {
        stats.connects += 1
        var hello: JSONObject = ["type": .string("hello"), "protocol": .number(1), "heartbeat": .bool(true)]
        if let token { hello["token"] = .string(token) }
        if let device { hello["device"] = .string(device) }
        if let app {
            var fields = JSONObject()
            if let platform = app.platform { fields["platform"] = .string(platform) }
            if let version = app.version { fields["version"] = .string(version) }
            hello["app"] = .object(fields)
        }
        if let components { hello["components"] = ComponentCapabilities.json(components) }
        if let epoch { hello["epoch"] = .string(epoch) }
        if let lastSync { hello["last_sync"] = .number(Double(lastSync)) }
        return [.send(hello)]
    }

    /// What a liveness check at `now` found.
    enum LinkCheck: Equatable {
        /// Something arrived recently enough: check again at `until`.
        case alive(until: ContinuousClock.Instant)
        /// Nothing arrived for `silence` (at least the limit): give the connection up and reconnect.
        case dead(silence: Duration)
        /// There is no connection to check.
        case closed
    }

    /// Checks the link at `now` (when the timer armed for `liveness.deadline` fires).
    mutating func checkLink(now: ContinuousClock.Instant) -> LinkCheck {
        guard let deadline = liveness.deadline else { return .closed }
        guard liveness.isDead(now: now) else { return .alive(until: deadline) }
        stats.deadLinks += 1
        return .dead(silence: liveness.silence(now: now))
    }

    /// The client will not connect again: `track` events waiting, and those made later, are dropped.
    mutating func end() {
        closed()
        ended = true
        stats.droppedTracks += pendingTracks.count
        pendingTracks = []
    }

    /// The socket closed (or was given up): what was in flight on it is void.
    mutating func closed() {
        live = false
        pendingSubscribes = []
        liveness.closed()
    }

    // MARK: - Hub messages

    /// Something arrived on the connection (any text, JSON or not): the link is alive.
    mutating func heard(now: ContinuousClock.Instant) {
        liveness.heard(now: now)
    }

    /// One message from the hub; a `fatal` error means reconnecting cannot help.
    mutating func receive(_ message: JSONValue) -> (actions: [Action], fatal: HubError?) {
        switch message["type"]?.stringValue {
        case "welcome": return (welcome(message), nil)
        case "heartbeat": return ([], nil)  // it only proves the link is alive
        case "snapshot", "patch", "unchanged": return (screenMessage(message), nil)
        case "pending": return (pending(message), nil)
        case "gone":
            guard let screen = message["screen"]?.stringValue else { return ([], nil) }
            answered(screen)
            guard screens.removeValue(forKey: screen) != nil else { return ([], nil) }
            return ([.store(key: scope.screenKey(screen), value: nil), .emit(.gone(screen: screen))], nil)
        case "sync": return (sync(message), nil)
        case "error": return error(message)
        default: return ([], nil)  // a newer hub's message: ignored (forward compatibility)
        }
    }

    private mutating func welcome(_ message: JSONValue) -> [Action] {
        let welcome = Welcome(
            session: message["session"]?.stringValue ?? "", user: message["user"]?.stringValue,
            heartbeatSeconds: message["heartbeat_s"]?.intValue ?? 0, syncSeq: message["sync_seq"]?.intValue ?? 0,
            epoch: message["epoch"]?.stringValue)
        live = true
        stats.welcomes += 1
        // A hub that names no epoch predates heartbeats (both came in protocol v1's issue 24).
        liveness.welcomed(heartbeatSeconds: welcome.heartbeatSeconds, hubSendsHeartbeats: welcome.epoch != nil)
        var actions: [Action] = []
        let epochChanged = welcome.epoch != epoch
        if epochChanged, epoch != nil {
            // Another hub state (a reset data dir, another cluster): versions and sync seqs counted
            // in the old one mean nothing here. Nothing stored is sent as `have` or shown again.
            stats.epochChanges += 1
            if !handledSyncs.isEmpty { actions.append(.store(key: scope.handledSyncsKey, value: nil)) }
            for screen in screens.keys.sorted() {
                screens[screen] = Screen()
                actions.append(.store(key: scope.screenKey(screen), value: nil))
            }
            forgetSyncs()
            syncMax = nil
            lastSync = nil
        }
        epoch = welcome.epoch
        if syncMax == nil, let seq = message["sync_seq"]?.intValue { syncMax = seq }
        actions += saveLastSync(force: epochChanged)
        actions.append(.emit(.welcome(welcome)))
        for screen in screens.keys.sorted() {
            guard var entry = screens[screen] else { continue }
            actions.append(subscribeMessage(screen, &entry))
            screens[screen] = entry
        }
        for (_, message) in owedReports { actions.append(.send(message)) }
        owedReports = []
        for id in pendingAcks { actions.append(.send(["type": .string("ack"), "sync": .string(id)])) }
        pendingAcks = []
        if let pushToken {
            actions.append(.send(pushToken.message))
        } else if owesPushTokenRemoval {
            actions.append(.send(PushToken.removal))
        }
        owesPushTokenRemoval = false
        // Last: after the subscribes, so that a unit is served its variant before its events
        // count (results count a goal only after the unit was served, DESIGN §6).
        for track in pendingTracks { actions.append(.send(track.message)) }
        stats.tracks += pendingTracks.count
        pendingTracks = []
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

    /// The hub has no version of the screen yet: the subscription stays, its first publish brings
    /// a snapshot. What the client held of it (deleted while it was away) is dropped.
    private mutating func pending(_ message: JSONValue) -> [Action] {
        guard let screen = message["screen"]?.stringValue else { return [] }
        answered(screen)
        guard var entry = screens[screen] else { return [] }
        stats.pending += 1
        var actions: [Action] = []
        if entry.tree != nil || entry.stored != nil {
            entry = Screen()
            actions.append(.store(key: scope.screenKey(screen), value: nil))
        }
        entry.pending = true
        entry.resyncing = true  // only the snapshot can follow
        screens[screen] = entry
        actions.append(.pending(screen: screen))
        return actions
    }

    private mutating func screenMessage(_ message: JSONValue) -> [Action] {
        guard let screen = message["screen"]?.stringValue, let version = message["version"]?.intValue,
            let hash = message["hash"]?.stringValue
        else { return [] }
        answered(screen)
        guard var entry = screens[screen] else { return [] }  // unsubscribed meanwhile
        defer { screens[screen] = entry }
        // Absent: none (snapshot, unchanged), or the same as before (patch).
        let variants = StoredScreen.variants(message["variants"])
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
            entry.pending = false
            let meta = TreeMeta(version: version, hash: hash, source: .snapshot, variants: variants ?? [:])
            return actions + accept(&entry, screen, tree, meta, canonical)
        case "unchanged":
            stats.unchanged += 1
            guard let tree = entry.tree else { return resubscribe(&entry, screen, .noTree, message) }
            entry.resyncing = false
            let meta = TreeMeta(version: version, hash: hash, source: .unchanged, variants: variants ?? [:])
            return accept(&entry, screen, tree, meta, nil)
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
            let meta = TreeMeta(
                version: version, hash: hash, source: .patch, from: entry.version, patch: patch,
                variants: variants ?? entry.variants)
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

    /// Holds `tree` as `meta.version` with `meta.variants`, stores it when what is stored differs
    /// (another version; the same version rendered anew after an experiment changed, or with
    /// other variants; from its `canonical` bytes when the caller has them), and hands it over
    /// when it is new to the app.
    private func accept(_ entry: inout Screen, _ screen: String, _ tree: JSONValue, _ meta: TreeMeta, _ canonical: [UInt8]?)
        -> [Action]
    {
        let (version, hash, source, variants) = (meta.version, meta.hash, meta.source, meta.variants)
        var actions: [Action] = []
        let renditionChanged = entry.hash != hash || entry.variants != variants
        let changed = entry.delivered != version || source == .snapshot || entry.tree != tree || renditionChanged
        entry.tree = tree
        entry.version = version
        entry.hash = hash
        entry.variants = variants
        if entry.stored != version || source == .snapshot || renditionChanged {
            entry.stored = version
            let stored = StoredScreen.form(
                epoch: epoch, canonical: canonical ?? JSONWriter.write(tree), version: version, hash: hash,
                variants: variants)
            actions.append(.store(key: scope.screenKey(screen), value: stored))
        }
        guard changed else { return actions }
        entry.delivered = version
        actions.append(.deliver(screen: screen, tree: tree, meta: meta))
        return actions
    }

    private mutating func sync(_ message: JSONValue) -> [Action] {
        stats.syncs += 1
        guard let id = message["id"]?.stringValue else { return [] }
        let seq = message["seq"]?.intValue ?? 0
        guard seenSyncSet.insert(id).inserted else {
            stats.duplicateSyncs += 1
            // Seen in a push (or handled before a restart): `lastSync` may pass it now, or once
            // the app returns for a push still waiting.
            if waitingPushes.remove(id) != nil { waitingSyncs[id] = seq }
            guard seq > (syncMax ?? -1) else { return [] }
            syncMax = seq
            return saveLastSync()
        }
        seenSyncs.append(id)
        if seenSyncs.count > Self.rememberedSyncs { seenSyncSet.remove(seenSyncs.removeFirst()) }
        if seq > (syncMax ?? -1) { syncMax = seq }
        waitingSyncs[id] = seq
        let jitter = max(0, message["jitter_ms"]?.intValue ?? 0)
        // A replay below last_sync (after a first welcome or an epoch change) lowers it until handled.
        return saveLastSync() + [.schedule(notification(message, id: id, jitterMs: jitter))]
    }

    /// The app's view of a sync object (from the socket or a push), before its jitter wait.
    private func notification(_ message: JSONValue, id: String, jitterMs: Int) -> SyncNotification {
        SyncNotification(
            id: id, seq: message["seq"]?.intValue ?? 0, reason: message["reason"]?.stringValue ?? "",
            scope: message["scope"]?.stringValue ?? "", hint: message["hint"],
            mandatory: message["mandatory"] == .bool(true), jitterMs: jitterMs, delayMs: 0)
    }

    /// Takes the stored ids of handled syncs (oldest first) as seen: neither a push nor a replay
    /// hands them to the app again.
    private mutating func remember(handled: [String]) {
        handledSyncs = Array(handled.suffix(Self.rememberedHandledSyncs))
        for id in handledSyncs where seenSyncSet.insert(id).inserted { seenSyncs.append(id) }
    }

    private func storeHandledSyncs() -> Action {
        .store(
            key: scope.handledSyncsKey,
            value: handledSyncs.isEmpty ? nil : JSONWriter.string(.array(handledSyncs.map(JSONValue.string))))
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
            if screens.removeValue(forKey: screen) != nil { actions.append(.store(key: scope.screenKey(screen), value: nil)) }
        }
        actions.append(.emit(.error(error)))
        let fatal = error.code == "unsupported_protocol" || error.code == "unauthorized"
        return (actions, fatal ? error : nil)
    }

    /// `last_sync` = every sync up to it was handed to the app; stored with the epoch it counts in
    /// (`force`: store the record although the value did not change — the epoch did).
    private mutating func saveLastSync(force: Bool = false) -> [Action] {
        var value = syncMax
        for seq in waitingSyncs.values where value.map({ seq - 1 < $0 }) ?? false { value = seq - 1 }
        guard value != lastSync || force else { return [] }
        lastSync = value
        guard epoch != nil else { return [] }  // a hub without epochs: nothing to resume from later
        return [.store(key: scope.recordKey, value: ScopeRecord(epoch: epoch, lastSync: value).stored)]
    }

    /// Sync bookkeeping that belongs to one user in one hub state: ids to dedupe (another state
    /// numbers its own from 1) and those handled, acks owed, syncs waiting for their jitter or
    /// from a push (handed to the app, never acked), and render reports owed (a version drawn for
    /// another user or state means nothing here).
    private mutating func forgetSyncs() {
        seenSyncs = []
        seenSyncSet = []
        waitingSyncs = [:]
        waitingPushes = []
        handledSyncs = []
        pendingAcks = []
        owedReports = []
    }
}
