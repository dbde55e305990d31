/// One client loop's share of the hub (DESIGN §9 "Who owns what"): its view of hub state, the
/// sessions of its `/v1/connect` clients, its signed-in clients indexed by user, its subscribers
/// indexed by screen, and its spread syncs. It applies the control plane's changes in the order
/// they were posted, drives the sessions and performs what they decide on their connections.
/// Confined to its loop: nothing here is locked or shared.
///
/// A connection knows its session only by its slot here (`WebSocketConnection.session`); the
/// indexes hold connections, which give both the session (an array index: no hash lookup per
/// delivery) and the transport to write to.
///
/// Invariants (STYLE §5): a connection is in `subscribers[s]` iff its session subscribes to `s`,
/// and in `awaiting[s]` iff its session waits for the first version of `s`;
/// a signed-in connection of user `u` is in `byUser[u]` (its token); no key maps to an empty
/// collection; every session in `sessions` belongs to an unreaped connection, and a connection
/// leaves every index and gives its slot back (`sessionEnded`) before it is reaped.
final class Shard {
    /// Read per connection through a local copy (`let view = self.view`): passing the stored
    /// property itself copies the struct (a retain and release of each of its fields) per call.
    private(set) var view: HubView
    /// The owning loop, which outlives its shard (it holds it): no reference-count check per use.
    unowned(unsafe) let loop: ClientLoop
    private(set) var settings: Session.Settings
    private let keepVersions: Int
    /// The control plane's mailbox: answers, sticky assignments and exposures go there.
    private let control: Mailbox
    private let metrics: Metrics
    /// The session of every `/v1/connect` connection of this loop, by the slot it carries.
    private var sessions = SessionTable()
    private var subscribers: [String: ConnectionSet] = [:]
    /// Connections subscribed to a screen that has no version yet, by screen name.
    private var awaiting: [String: ConnectionSet] = [:]
    private var byUser: [String: Set<UInt64>] = [:]
    /// Sync deliveries spread over a window (DESIGN §5 `spread`), due at their deadline.
    private var scheduledSyncs = Timers<(token: UInt64, sync: Sync)>()
    /// The actions of the session being served; reused so that serving allocates nothing.
    private var actions: [Session.Action] = []
    /// Counted here and added to the shared metrics once per tick (`tickEnded`).
    private var messagesOut = 0
    private var syncsDelivered = 0
    /// Renditions and frames derived here (seeded with what the control plane prepared).
    var cache = RenditionCache()
    /// How many subscriptions here see each screen as each render target; the control plane
    /// hears when a target starts or stops being used, to prepare renditions for it.
    private var targetCounts: [String: [RenderTarget: Int]] = [:]
    /// Connections whose hello waits for a key (`Session.State.awaitingKey`), by token; a token
    /// whose connection closed meanwhile is dropped when they are released (`keysRefreshed`).
    private var parked: [UInt64] = []
    /// This loop asked the control plane for the JWKS and has not heard back: one question per
    /// answer, however many hellos park meanwhile.
    private var isAwaitingKeys = false

    init(
        loop: ClientLoop, view: HubView, config: HubConfig, tokens: JWTVerifier, epoch: String, control: Mailbox,
        metrics: Metrics
    ) {
        self.loop = loop
        self.view = view
        self.control = control
        self.metrics = metrics
        keepVersions = config.keepVersions
        settings = Session.Settings(
            allowAnonymous: config.allowAnonymous,
            heartbeatSeconds: Int(loop.heartbeatInterval / 1_000_000_000), tokens: tokens, epoch: epoch,
            maxSubscriptions: config.maxSubscriptions)
        actions.reserveCapacity(8)
    }

    // MARK: - Sessions, as their connections report

    /// A `/v1/connect` connection was upgraded: its session waits for hello until `helloDeadline`.
    /// - Returns: the slot the connection keeps to name its session.
    func openSession(helloDeadline: UInt64, upgradeToken: String?) -> SessionSlot {
        sessions.open(Session(helloDeadline: helloDeadline, upgradeToken: upgradeToken))
    }

    /// A message arrived on a connection's `/v1/connect` session.
    func received(_ message: ClientMessage, on connection: WebSocketConnection) {
        guard let slot = connection.session else { return }
        sessions[slot].received(
            message, view: view, settings: settings, nowMilliseconds: WallClock.nowMilliseconds(), cache: &cache,
            out: &actions)
        perform(on: connection)
    }

    func receivedInvalid(_ error: WireError, on connection: WebSocketConnection) {
        guard let slot = connection.session else { return }
        sessions[slot].receivedInvalid(error, out: &actions)
        perform(on: connection)
    }

    /// The deadline the connection's session acts on (its hello deadline), if any.
    func sessionDeadline(of connection: WebSocketConnection) -> UInt64? {
        guard let slot = connection.session else { return nil }
        return sessions[slot].helloDeadline
    }

    func sessionTimerFired(_ connection: WebSocketConnection, now: UInt64) {
        guard let slot = connection.session else { return }
        sessions[slot].timerFired(now: now, out: &actions)
        perform(on: connection)
    }

    /// The connection's queue is below the low watermark: if updates were held back while it
    /// was congested, its session catches up now.
    func outboundDrained(_ connection: WebSocketConnection) {
        guard let slot = connection.session, sessions[slot].needsCatchUp else { return }
        sessions[slot].drained(view: view, nowMilliseconds: WallClock.nowMilliseconds(), cache: &cache, out: &actions)
        perform(on: connection)
    }

    /// The connection is being reaped: it leaves every index, and its session ends.
    func sessionEnded(_ connection: WebSocketConnection) {
        guard let slot = connection.session else { return }
        if let ready = sessions[slot].ready {
            for subscription in ready.subscriptions {
                unsubscribe(connection, from: subscription.version.name, subscription.target)
            }
            for screen in ready.memoryIfAny?.awaitedScreens ?? [] { stopAwaiting(connection, screen) }
            signOut(connection.token, ready.attributes)
        }
        sessions[slot].closed()
        sessions.release(slot)
    }

    /// The signed-in session of `connection`, if it has one.
    private func ready(_ connection: WebSocketConnection) -> ReadySession? {
        guard let slot = connection.session else { return nil }
        return sessions[slot].ready
    }

    /// A first assignment in a sticky experiment: kept here at once so this loop's other clients
    /// agree; the control plane makes it durable and tells every loop (first writer wins there).
    func recordSticky(experiment: String, unit: String, variant: String) {
        view.apply(.stickyRecorded(experiment: experiment, unit: unit, variant: variant), keepVersions: keepVersions)
        control.post(.event(.stickyAssigned(experiment: experiment, unit: unit, variant: variant)))
    }

    /// The control plane says a JWKS fetch ended, or that none will run now (DESIGN §18): every
    /// parked hello is verified once more against the keys as they are.
    func keysRefreshed() {
        let tokens = parked
        parked.removeAll()
        isAwaitingKeys = false
        let now = WallClock.nowMilliseconds()
        let view = self.view
        for token in tokens {
            guard let connection = loop.connection(token), let slot = connection.session else { continue }
            sessions[slot].keysRefreshed(
                view: view, settings: settings, nowMilliseconds: now, cache: &cache, out: &actions)
            perform(on: connection)
        }
    }

    /// A reloaded config: the session settings that follow it.
    func reconfigure(_ config: HubConfig) {
        settings.maxSubscriptions = config.maxSubscriptions
        settings.heartbeatSeconds = Int(loop.heartbeatInterval / 1_000_000_000)
    }

    // MARK: - Changes from the control plane

    func apply(_ change: HubChange, reply: GatherID?) {
        view.apply(change, keepVersions: keepVersions)
        let answer: LoopAnswer?
        switch change {
        case .screenPublished(let version, let prepared):
            if let prepared { cache.seed(prepared) }
            cache.forget(screen: version.name, keeping: view.screens[version.name] ?? [])
            answer = fanOut(version)
        case .screenDeleted(let name):
            cache.forget(screen: name, keeping: [])
            let told = subscribers[name]?.inOrder() ?? []
            for connection in told {
                guard let slot = connection.session else { continue }
                sessions[slot].screenDeleted(name, out: &actions)
                perform(on: connection)
            }
            answer = .count(told.count)
        case .experimentsChanged(_, let screens):
            for screen in screens { _ = bringSubscribersUpToDate(screen) }
            answer = nil
        case .screenReloaded(let name, let versions, let release):
            cache.forget(screen: name, keeping: versions + (release.map { [$0.candidate] } ?? []))
            let awaited = view.current(name).map { serveAwaiting($0).sent } ?? 0
            answer = .count(awaited + bringSubscribersUpToDate(name))
        case .releaseChanged(let release, _):
            cache.forget(screen: release.screen, keeping: (view.screens[release.screen] ?? []) + [release.candidate])
            answer = .count(bringSubscribersUpToDate(release.screen))
        case .syncAppended(let sync):
            var devices: [DeviceKey]?
            if sync.push == .offline, reply != nil { devices = [] }
            let count = deliver(sync, noting: &devices)
            answer = devices.map { .syncTargets(count: count, devices: $0) } ?? .count(count)
        case .componentsChanged:
            answer = .count(renderAgain())
        case .cohortChanged, .stickyRecorded:
            answer = nil  // read when targeting and rendering; nothing to send now
        }
        if let reply { control.post(.event(.answer(reply, answer ?? .count(0)))) }
    }

    /// Brings every subscriber of `screen` here to what it should see now (its rendition or the
    /// version a release gives it changed). - Returns: how many were sent an update.
    private func bringSubscribersUpToDate(_ screen: String) -> Int {
        let now = WallClock.nowMilliseconds()
        let view = self.view
        var sent = 0
        for connection in subscribers[screen]?.inOrder() ?? [] {
            guard let slot = connection.session else { continue }
            sessions[slot].screenMayHaveChanged(
                screen: screen, view: view, isCongested: connection.isCongested, nowMilliseconds: now, cache: &cache,
                out: &actions)
            if actions.contains(where: \.isSendOrHold) { sent += 1 }
            perform(on: connection, sending: .writeNow)
        }
        return sent
    }

    /// Resolves again what every signed-in client here renders (the registry or the app profiles
    /// changed, DESIGN §16) and brings each whose capabilities changed to its new renditions.
    /// - Returns: how many were sent an update.
    private func renderAgain() -> Int {
        let now = WallClock.nowMilliseconds()
        let view = self.view
        var sent = 0
        loop.forEachConnection { connection in
            guard let slot = connection.session, sessions[slot].ready != nil else { return }
            sessions[slot].capabilitiesMayHaveChanged(
                view: view, isCongested: connection.isCongested, nowMilliseconds: now, cache: &cache, out: &actions)
            if actions.contains(where: \.isSendOrHold) { sent += 1 }
            perform(on: connection, sending: .writeNow)
        }
        return sent
    }

    /// Brings every subscriber of `version.name` here to `version`, and those waiting for its
    /// first version their snapshot.
    private func fanOut(_ version: ScreenVersion) -> LoopAnswer {
        var (sent, renditions) = serveAwaiting(version)
        guard let connections = subscribers[version.name]?.inOrder() else {
            return .published(sent: sent, renditions: renditions)
        }
        let now = WallClock.nowMilliseconds()
        let view = self.view
        var memo = FanoutMemo()
        for connection in connections {
            guard let slot = connection.session else { continue }
            sessions[slot].versionPublished(
                version, view: view, isCongested: connection.isCongested, nowMilliseconds: now, memo: &memo,
                cache: &cache, out: &actions)
            if actions.contains(where: \.isSendOrHold) { sent += 1 }
            perform(on: connection, sending: .writeNow)
        }
        metrics.fanouts.add(1, ordering: .relaxed)
        renditions.formUnion(memo.targets.map { cache.renditionKey(version, for: $0) })
        return .published(sent: sent, renditions: renditions)
    }

    /// Brings the clients waiting for the first version of `version.name` their snapshot (they
    /// become subscribers, so the fan-out that follows finds them at this version already).
    /// - Returns: how many were sent it, and the renditions they see.
    private func serveAwaiting(_ version: ScreenVersion) -> (sent: Int, renditions: Set<RenditionKey>) {
        guard let connections = awaiting[version.name]?.inOrder() else { return (0, []) }
        let now = WallClock.nowMilliseconds()
        let view = self.view
        var renditions = Set<RenditionKey>()
        for connection in connections {
            guard let slot = connection.session else { continue }
            sessions[slot].awaitedScreenPublished(
                version.name, view: view, nowMilliseconds: now, cache: &cache, out: &actions)
            for case .subscribed(_, let target) in actions {
                renditions.insert(cache.renditionKey(version, for: target))
            }
            perform(on: connection, sending: .writeNow)
        }
        return (connections.count, renditions)
    }

    /// Delivers `sync` to every signed-in client here it targets, now or spread over its window.
    /// - Parameter devices: when not nil, the targets' devices are added (a sync pushed to the
    ///   devices that are offline).
    /// - Returns: how many it targets.
    private func deliver(_ sync: Sync, noting devices: inout [DeviceKey]?) -> Int {
        var count = 0
        if sync.spreadMilliseconds == 0 {
            // One pass: each target gets the sync as it is found.
            forEachTarget(of: sync.target) { connection in
                count += 1
                if devices != nil { note(connection, in: &devices) }
                deliverNow(sync, to: connection)
            }
        } else {
            // Spread: the i-th of n targets here is due at start + spread × i / n.
            var targets: [WebSocketConnection] = []
            forEachTarget(of: sync.target) { targets.append($0) }
            if devices != nil { for connection in targets { note(connection, in: &devices) } }
            count = targets.count
            let spread = UInt64(sync.spreadMilliseconds) * 1_000_000
            for (i, connection) in targets.enumerated() {
                let delay = SpreadSchedule.delay(index: i, of: targets.count, over: spread)
                if delay == 0 {
                    deliverNow(sync, to: connection)
                } else {
                    scheduledSyncs.schedule((connection.token, sync), at: loop.now + delay)
                }
            }
        }
        sync.receipts.targetedOnline.add(count, ordering: .relaxed)
        return count
    }

    private func note(_ connection: WebSocketConnection, in devices: inout [DeviceKey]?) {
        guard let client = ready(connection)?.attributes, !client.device.isEmpty else { return }
        devices?.append(DeviceKey(user: client.user, device: client.device))
    }

    private func deliverNow(_ sync: Sync, to connection: WebSocketConnection) {
        guard let slot = connection.session else { return }
        sessions[slot].syncArrived(sync, isCongested: connection.isCongested, out: &actions)
        perform(on: connection, sending: .writeNow)
    }

    /// Calls `body` with each signed-in connection here that `target` reaches.
    private func forEachTarget(of target: Target, _ body: (WebSocketConnection) -> Void) {
        let view = self.view
        func consider(_ connection: WebSocketConnection) {
            if let ready = ready(connection), view.matches(target, ready.attributes) { body(connection) }
        }
        switch target.scope {
        case .user(let user):
            for token in byUser[user] ?? [] { loop.connection(token).map(consider) }
        case .users(let users):
            for user in users { for token in byUser[user] ?? [] { loop.connection(token).map(consider) } }
        case .cohort, .all:
            loop.forEachConnection(consider)
        }
    }

    /// The end of a tick: spread syncs whose time has come; the tick's counts to the shared metrics.
    func tickEnded(now: UInt64) {
        while let entry = scheduledSyncs.popDue(now: now) {
            if let connection = loop.connection(entry.payload.token) { deliverNow(entry.payload.sync, to: connection) }
        }
        if messagesOut > 0 {
            metrics.messagesOut.add(messagesOut, ordering: .relaxed)
            messagesOut = 0
        }
        if syncsDelivered > 0 {
            metrics.syncsDelivered.add(syncsDelivered, ordering: .relaxed)
            syncsDelivered = 0
        }
    }

    var nextSyncDeadline: UInt64? { scheduledSyncs.nextDeadline }

    // MARK: - Queries

    func answer(_ query: LoopQuery, reply: GatherID) {
        let answer: LoopAnswer
        switch query {
        case .reach(let target):
            var connections = 0
            var users = Set<String>()
            forEachTarget(of: target) { connection in
                connections += 1
                if let user = ready(connection)?.attributes.user { users.insert(user) }
            }
            answer = .reach(connections: connections, users: users)
        case .renderTargets(let screen):
            var counts: [RenderTarget: Int] = [:]
            for connection in subscribers[screen]?.inOrder() ?? [] {
                guard let ready = ready(connection), let index = ready.index(of: screen) else { continue }
                counts[ready.subscriptions[index].target, default: 0] += 1
            }
            answer = .renderTargets(counts)
        case .subscribers:
            answer = .subscribers(subscribers.mapValues(\.count))
        case .clients(let user):
            var found: [ClientAttributes] = []
            if let user {
                for token in byUser[user] ?? [] {
                    if let ready = loop.connection(token).flatMap(ready) { found.append(ready.attributes) }
                }
            } else {
                loop.forEachConnection { if let ready = ready($0) { found.append(ready.attributes) } }
            }
            answer = .clients(found)
        case .releaseReach(let reach):
            answer = releaseReach(reach)
        case .clientBuilds:
            var counts: [ClientBuild: Int] = [:]
            loop.forEachConnection { if let ready = ready($0) { counts[ClientBuild(ready.attributes), default: 0] += 1 } }
            answer = .clientBuilds(counts)
        case .devicesOnline(let keys):
            answer = .devicesOnline(devicesOnline(keys))
        }
        control.post(.event(.answer(reply, answer)))
    }

    /// Which of `keys` have a signed-in connection here: a user's through the user index, an
    /// anonymous device's by one pass over the connections (retries are rare).
    private func devicesOnline(_ keys: [DeviceKey]) -> [DeviceKey] {
        let wanted = Set(keys)
        var online: [DeviceKey] = []
        func consider(_ connection: WebSocketConnection) {
            guard let client = ready(connection)?.attributes else { return }
            let key = DeviceKey(user: client.user, device: client.device)
            if wanted.contains(key) { online.append(key) }
        }
        for user in Set(keys.compactMap(\.user)) {
            for token in byUser[user] ?? [] { loop.connection(token).map(consider) }
        }
        if keys.contains(where: { $0.user == nil }) {
            loop.forEachConnection { connection in
                if ready(connection)?.attributes.user == nil { consider(connection) }
            }
        }
        return online
    }

    /// The subscribers of the release's screen here, those `reach.basisPoints` would expose, and
    /// those its present percent exposes.
    private func releaseReach(_ reach: ReleaseReach) -> LoopAnswer {
        var subscribers = 0, exposed = 0, before = 0
        let prefix = ReleaseExposure.prefix(screen: reach.screen, release: reach.release)
        for connection in self.subscribers[reach.screen]?.inOrder() ?? [] {
            guard let ready = ready(connection) else { continue }
            subscribers += 1
            func exposes(at points: Int) -> Bool {
                ReleaseExposure.exposes(
                    prefix: prefix, qaCohort: reach.qaCohort, basisPoints: points, ready.attributes, unit: ready.unit,
                    view: view)
            }
            if exposes(at: reach.basisPoints) { exposed += 1 }
            if let from = reach.fromBasisPoints, exposes(at: from) { before += 1 }
        }
        return .releaseReach(subscribers: subscribers, exposed: exposed, exposedBefore: before)
    }

    // MARK: - Performing session actions

    /// How `perform` sends frames: queued for the end of the tick (a client's own messages), or
    /// written at once (a fan-out: one frame per connection for one event).
    private enum Sending { case queue, writeNow }

    /// Performs the actions the session decided.
    private func perform(on connection: WebSocketConnection, sending: Sending = .queue) {
        for action in actions {
            switch action {
            case .send(let frame):
                switch sending {
                case .queue: connection.queueShared(frame)
                case .writeNow: connection.queueShared(frame, writeNow: true)
                }
                messagesOut += 1
            case .close(let code, let reason):
                connection.close(code, reason: reason)
            case .signedIn(let ready):
                if let user = ready.attributes.user { byUser[user, default: []].insert(connection.token) }
                metrics.sessions.add(1, ordering: .relaxed)
            case .subscribed(let screen, let target):
                subscribers[screen, default: ConnectionSet()].insert(connection)
                metrics.subscriptions.add(1, ordering: .relaxed)
                count(screen, target, +1)
            case .awaitsScreen(let screen):
                awaiting[screen, default: ConnectionSet()].insert(connection)
            case .stoppedAwaiting(let screen):
                stopAwaiting(connection, screen)
            case .sendHeartbeats:
                connection.sendsHeartbeats = true
            case .retargeted(let change):
                count(change.screen, change.from, -1)
                count(change.screen, change.to, +1)
            case .unsubscribed(let screen, let target):
                unsubscribe(connection, from: screen, target)
            case .delivered(let sync):
                sync.receipts.delivered.add(1, ordering: .relaxed)
                syncsDelivered += 1
            case .acked(let sync):
                sync.receipts.acked.add(1, ordering: .relaxed)
                metrics.syncsAcked.add(1, ordering: .relaxed)
            case .result(let event, let sessionWasServed):
                control.post(.event(.result(event, sessionWasServed: sessionWasServed)))
            case .stickyAssigned(let experiment, let unit, let variant):
                recordSticky(experiment: experiment, unit: unit, variant: variant)
            case .coalesced:
                metrics.coalesced.add(1, ordering: .relaxed)
            case .subscriptionRefused:
                metrics.subscriptionRefusals.add(1, ordering: .relaxed)
            case .pushDeviceRegistered(let device):
                control.post(.event(.pushDeviceRegistered(device)))
            case .pushDeviceRemoved(let key):
                control.post(.event(.pushDeviceRemoved(key)))
            case .renderErrorReported(let report):
                control.post(.event(.renderError(report)))
            case .awaitsKey(let kid):
                parked.append(connection.token)
                if !isAwaitingKeys {
                    isAwaitingKeys = true
                    control.post(.event(.unknownKeyID(kid)))
                }
            }
        }
        actions.removeAll(keepingCapacity: true)
    }

    private func stopAwaiting(_ connection: WebSocketConnection, _ screen: String) {
        guard awaiting[screen]?.remove(token: connection.token) != nil else { return }
        if awaiting[screen]?.isEmpty == true { awaiting[screen] = nil }
    }

    private func unsubscribe(_ connection: WebSocketConnection, from screen: String, _ target: RenderTarget) {
        guard subscribers[screen]?.remove(token: connection.token) != nil else { return }
        if subscribers[screen]?.isEmpty == true { subscribers[screen] = nil }
        metrics.subscriptions.subtract(1, ordering: .relaxed)
        count(screen, target, -1)
    }

    /// Counts a subscription seen as `target`; tells the control plane when the target starts or
    /// stops being used here.
    private func count(_ screen: String, _ target: RenderTarget, _ delta: Int) {
        let before = targetCounts[screen]?[target] ?? 0
        let after = before + delta
        targetCounts[screen, default: [:]][target] = after > 0 ? after : nil
        if targetCounts[screen]?.isEmpty == true { targetCounts[screen] = nil }
        if (before == 0) != (after <= 0) {
            control.post(.event(.targetInUse(screen: screen, target, after > 0)))
        }
    }

    private func signOut(_ token: UInt64, _ attributes: ClientAttributes) {
        if let user = attributes.user {
            byUser[user]?.remove(token)
            if byUser[user]?.isEmpty == true { byUser[user] = nil }
        }
        metrics.sessions.subtract(1, ordering: .relaxed)
    }
}

extension Session.Action {
    /// Whether the action sends (or holds back for a catch-up) an update.
    var isSendOrHold: Bool {
        switch self {
        case .send, .coalesced: true
        case .close, .signedIn, .subscribed, .awaitsScreen, .stoppedAwaiting, .sendHeartbeats, .retargeted,
            .unsubscribed, .delivered, .acked, .result, .stickyAssigned, .subscriptionRefused, .pushDeviceRegistered,
            .pushDeviceRemoved, .renderErrorReported, .awaitsKey:
            false
        }
    }
}

@available(*, unavailable)
extension Shard: Sendable {}
