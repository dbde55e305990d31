import Foundation
import ScreenTree

/// The Swift client of protocol v1 (DESIGN §12), the JavaScript client's behaviour in Swift:
/// subscribes to screens and keeps each tree current (RFC 6902 patches, checked against the
/// RFC 8785 + SHA-256 hash after every change, resubscribing on a mismatch), resumes with `have`
/// and `last_sync` kept in `storage` per user and hub state (epoch), hands syncs to the app after
/// their jitter wait (deduped by id, then acked), sends `rendered` (or `render_error` when a tree
/// callback throws, DESIGN §15), gives a connection up when
/// nothing arrived for two heartbeats (whatever the transport), and reconnects with exponential
/// backoff and full jitter (starting over, with a short ceiling, when the hub closes with 1001).
///
/// ```swift
/// let hub = PushHubClient(url: HubURL("ws://127.0.0.1:8080/v1/connect")!, credentials: .token(jwt),
///                         app: AppInfo(platform: "ios", version: "5.3.0"))
/// let home = hub.subscribe("home") { tree, meta in render(tree) }
/// hub.onSync { sync in refetch(sync.scope) }
/// ```
///
/// Threading: every callback (trees, syncs, events) runs on the client's own serial queue, one at
/// a time and in order; hop to the main actor to touch UI. Methods may be called from any
/// thread, callbacks included. `state`, `lastSync`, `stats` and a subscription's `current` are
/// readable from anywhere.
///
/// Invariant (why `@unchecked Sendable` holds): every `var` below the `queue` mark is read and
/// written only on `queue`; `published` and `handlerIDs` are `Locked`; the rest is immutable.
public final class PushHubClient: @unchecked Sendable {
    public struct Options: Sendable {
        /// Reconnect delays: attempt n waits a random 0..min(cap, initial × 2ⁿ) (0.5 s doubling to 30 s).
        public var backoff = Backoff()
        /// After a close 1001 (the hub restarts) the schedule starts over and, for
        /// `goingAwayWindow`, its ceiling stops at `goingAwayCap` (docs/clients.md "Reconnect").
        public var goingAwayCap: Duration = .seconds(4)
        public var goingAwayWindow: Duration = .seconds(60)
        /// Send `rendered` once the tree callbacks for a version returned (default true). A
        /// callback that throws sends a `render_error` instead, whatever this says.
        public var autoRendered = true
        /// Uniform numbers in [0, 1) for the backoff and the sync jitter (tests inject one).
        public var random: @Sendable () -> Double = { Double.random(in: 0..<1) }
        /// Wait the random 0..jitter_ms before handing a sync over (default true: it spreads a
        /// fleet's re-fetches). Tools that only print syncs (`hubctl watch`) turn it off.
        public var waitsForJitter = true
        /// Every text message from the hub as received, before the client handles it (tools and
        /// debugging; called on the client's queue).
        public var onMessage: (@Sendable (String) -> Void)?
        /// The components this build renders, each with the highest version of it that it renders
        /// (DESIGN §16), declared in every hello (and by `fetchScreen`): `["Carousel": 2, "Text": 1]`. The hub never sends
        /// this client a node of a registered component it lacks, or a newer version: it gets the
        /// node's `fallback`, or nothing. `[:]` renders no registered component. Nil (the default):
        /// the hub uses the profile registered for `app` (`hubctl app components set`), else sends
        /// everything. A list `ComponentCapabilities.problem(in:)` refuses stops the program at
        /// `PushHubClient.init`: it is fixed when the app is built, so it is a programming error.
        public var components: [String: Int]?

        public init() {}
    }

    public typealias TreeHandler = @Sendable (JSONValue, TreeMeta) -> Void
    /// A tree callback that may fail to draw: what it throws is reported to the hub as a
    /// `render_error` (DESIGN §15). Every `TreeHandler` is one.
    public typealias ThrowingTreeHandler = @Sendable (JSONValue, TreeMeta) throws -> Void
    public typealias PendingHandler = @Sendable () -> Void
    public typealias SyncHandler = @Sendable (SyncNotification) -> Void
    public typealias EventHandler = @Sendable (ClientEvent) -> Void

    public let url: HubURL
    let credentials: Credentials
    let app: AppInfo?
    let storage: any ClientStorage
    let transport: any ClientTransport
    let options: Options
    let queue = DispatchQueue(label: "PushHubClient")
    private let handlerIDs = Locked(0)

    /// What other threads may read.
    private struct Published {
        var state = ConnectionState.connecting
        var lastSync: Int?
        var stats = ClientStats()
        var welcome: Welcome?
        var trees: [String: (tree: JSONValue, meta: TreeMeta)] = [:]
        var pending: Set<String> = []
    }

    private let published = Locked(Published())

    // MARK: queue-confined

    var session: ClientSession
    private var connection: (any TransportConnection)?
    /// Bumped by every open and close: events of an older connection are ignored.
    private var generation = 0
    private var schedule = ReconnectSchedule()
    /// The liveness check armed for the current connection's deadline.
    private var livenessCheck: DispatchWorkItem?
    private var fatal: HubError?
    private(set) var device: String?
    private var connectionState = ConnectionState.connecting
    private var treeHandlers: [String: [Int: ThrowingTreeHandler]] = [:]
    private var pendingHandlers: [String: [Int: PendingHandler]] = [:]
    private var syncHandlers: [Int: SyncHandler] = [:]
    private var eventHandlers: [Int: EventHandler] = [:]
    private var nextHandlerID = 0
    private var reconnect: DispatchWorkItem?
    /// `closeAndWait` callers, woken when the connection closed by `close` reports `.closed`.
    private var closeWaiters: [DispatchSemaphore] = []
    private var closingGeneration: Int?
    /// `handlePush` completions, by the id of the sync they wait for.
    private var pushCompletions: [String: @Sendable () -> Void] = [:]

    public init(
        url: HubURL, credentials: Credentials, app: AppInfo? = nil, storage: any ClientStorage = MemoryStorage(),
        transport: any ClientTransport = PlatformTransport.standard, options: Options = Options()
    ) {
        self.url = url
        self.credentials = credentials
        self.app = app
        self.storage = storage
        self.transport = transport
        self.options = options
        if let components = options.components, let problem = ComponentCapabilities.problem(in: components) {
            preconditionFailure("PushHubClient: Options.components maps each component to a version 1…1000: \(problem)")
        }
        session = ClientSession(app: app, components: options.components, scope: .none)
        queue.async { [self] in
            write(StorageScope.legacyLastSyncKey, nil)
            let pushToken = read(StorageScope.pushTokenKey).flatMap(PushToken.init(stored:))
            device = identity(hasPushToken: pushToken != nil)
            perform(session.setPushToken(pushToken))
            open()  // names the scope (the user) before any subscribe is handled
        }
    }

    // MARK: - Public API

    public var state: ConnectionState { published.withLock { $0.state } }
    /// The last sync seq fully handled (sent as `hello.last_sync` on the next connection).
    public var lastSync: Int? { published.withLock { $0.lastSync } }
    public var stats: ClientStats { published.withLock { $0.stats } }
    /// The current session's welcome; nil while not live.
    public var welcome: Welcome? { published.withLock { $0.welcome } }

    /// Follows `screen`: `onTree` gets each new tree (first the stored one, `source: .cache`, when
    /// there is one). `onPending` is called when the hub has no version of the screen yet (it is
    /// not published, or was deleted): the subscription stays, and the first publish brings its
    /// tree to `onTree` (`.snapshot`). The last subscription of a screen to close unsubscribes.
    ///
    /// `onTree` may throw: for a tree the hub sent (any source but `.cache`) the client then sends
    /// a `render_error` for that version (as `renderFailed` does, with the error thrown) and no
    /// `rendered`; the screen's other callbacks still run. The error is not rethrown.
    /// ```swift
    /// hub.subscribe("home") { tree, meta in try screen.draw(tree) }   // a throw reports render_error
    /// ```
    @discardableResult
    public func subscribe(
        _ screen: String, onTree: @escaping ThrowingTreeHandler = { _, _ in }, onPending: PendingHandler? = nil
    ) -> Subscription {
        let id = handlerID()
        queue.async { [self] in
            // Whether the session follows the screen decides, not whether callbacks are left: a
            // subscription that ended (`gone`, a refused subscribe) leaves its callbacks, which the
            // new one drops (they belong to what ended), asking the hub again.
            let follows = session.screens[screen] != nil
            if !follows {
                treeHandlers[screen] = nil
                pendingHandlers[screen] = nil
                published.withLock { _ = $0.trees.removeValue(forKey: screen) }  // the ended one's tree
            }
            treeHandlers[screen, default: [:]][id] = onTree
            if let onPending { pendingHandlers[screen, default: [:]][id] = onPending }
            if !follows {
                perform(session.subscribe(screen, stored: stored(screen, in: session.scope)))
            } else if let current = published.withLock({ $0.trees[screen] }) {
                // Drawn before: no `rendered` again, but a failure to draw it here is reported.
                render(screen, current.tree, current.meta, handlers: [onTree], confirms: false)
            }
        }
        return Subscription(screen: screen, id: id, client: self)
    }

    /// Calls `handler` with each sync after its random 0..jitter wait; the sync is acked once
    /// every handler returned. Returns the handler's cancellation.
    @discardableResult
    public func onSync(_ handler: @escaping SyncHandler) -> Cancellation {
        let id = handlerID()
        queue.async { [self] in syncHandlers[id] = handler }
        return Cancellation { [self] in queue.async { self.syncHandlers[id] = nil } }
    }

    /// Listens to `ClientEvent`s (state changes, welcomes, closes, errors, resubscribes, mismatches, gone).
    @discardableResult
    public func on(_ handler: @escaping EventHandler) -> Cancellation {
        let id = handlerID()
        queue.async { [self] in eventHandlers[id] = handler }
        return Cancellation { [self] in queue.async { self.eventHandlers[id] = nil } }
    }

    /// Tells the hub the app drew `version` of `screen` (confirms experiment exposures, DESIGN §6).
    /// Sent automatically after the tree callbacks unless `options.autoRendered` is false.
    public func rendered(_ screen: String, version: Int) {
        queue.async { [self] in perform(session.rendered(screen, version: version)) }
    }

    /// Tells the hub the app could not draw `version` of `screen` (DESIGN §15: it counts against
    /// a release's guard), for errors the app catches itself (a throwing tree callback is reported
    /// without it): `{"type":"render_error","screen":…,"version":…,"hash":…,"component":…,"message":…}`
    /// with the tree's hash when the client holds that version, the error's component when it is
    /// a `RenderErrorDescribing` (cut to 200 characters), and its message (`LocalizedError`'s
    /// `errorDescription`, else `String(describing: error)`, cut to 1000 characters). While not
    /// connected it waits and is sent after the next welcome: one report per screen waits, the
    /// latest (`rendered` or `render_error`); a user switch or another hub state drops it.
    public func renderFailed(_ screen: String, version: Int, error: any Error) {
        let report = RenderErrorReport(error)  // here: an Error need not be Sendable
        queue.async { [self] in perform(session.renderFailed(screen, version: version, report: report)) }
    }

    /// Reports a goal event for experiment results (DESIGN §6): `{"type":"track","event":…,"value":…}`.
    /// The hub counts it for every running experiment this client's unit was served a variant of
    /// (`hubctl experiment results KEY`). While not connected it waits (the newest 100; older ones
    /// are dropped, counted in `stats.droppedTracks`) and is sent after the next welcome; events
    /// waiting when the token provider signs in another user are dropped, never sent as theirs.
    /// Once the client is closed for good (`close()`, a refused token) events are dropped.
    ///
    /// - Parameters:
    ///   - event: 1–64 characters of `A-Z a-z 0-9 _ . : -` (`purchase`, `checkout.done`).
    ///   - value: what the event is worth (an amount, a duration), summed per unit and averaged
    ///     per variant in the results; a finite number. Nil counts the event alone.
    /// - Returns: false when `event` or `value` is refused (nothing is sent): the same refusal is
    ///   reported as an `.error` event with code `bad_track`, as the hub would answer it.
    @discardableResult
    public func track(_ event: String, value: Double? = nil) -> Bool {
        let track: Track
        do {
            track = try Track(event: event, value: value)
        } catch {
            queue.async { [self] in emit(.error(error)) }
            return false
        }
        queue.async { [self] in perform(session.track(track)) }
        return true
    }

    /// Registers the device's push token for the hub's silent-push fallback (DESIGN §17), or with
    /// nil removes it (sign-out): `{"type":"push_token","provider":…,"token":…,"topic":…}`, sent at
    /// once when connected and after every welcome, and kept in `storage` so that a restart sends
    /// it again. Call it whenever the platform hands the app a token (every launch is fine: the
    /// same token again changes nothing). The hub keeps tokens per user and device: a client
    /// signed in without a `device` gets one generated and kept in storage (as anonymous clients
    /// do), and reconnects at once if its connection was made without one. A removal made while
    /// not connected is sent after the next welcome, if the process still runs then.
    public func setPushToken(_ token: PushToken?) {
        queue.async { [self] in
            if token != nil, device == nil {
                device = storedDevice()
                if connection != nil, connectionState != .closed { reopen() }  // its hello named no device
            }
            perform(session.setPushToken(token))
        }
    }

    /// Hands the sync a silent push carries (DESIGN §17) to the `onSync` handlers, as one from the
    /// socket is but without the jitter wait (the app runs briefly in the background): APNs
    /// `userInfo` (`{"aps":…,"pushhub":{"type":"sync",…}}`) or an FCM data map
    /// (`{"pushhub":"<the sync as JSON text>"}`). A sync is handed over once per id whichever way
    /// it came first (the ids of the last 64 handled are kept in storage); a push does not move
    /// `lastSync`, so syncs the socket missed are still replayed by the hub. It is acked like any
    /// sync (after the next welcome when not connected).
    ///
    /// - Parameter completion: called on the client's queue once the handlers returned, or at once
    ///   when the sync was handed over already or the payload is not PushHub's (iOS: call the
    ///   fetch completion handler there).
    /// - Returns: whether `payload` carried a PushHub sync (false: it is the app's own push).
    @discardableResult
    public func handlePush(_ payload: [AnyHashable: Any], completion: (@Sendable () -> Void)? = nil) -> Bool {
        guard let message = PushedSync.message(in: payload), let id = message["id"]?.stringValue else {
            if let completion { queue.async { completion() } }
            return false
        }
        queue.async { [self] in
            let actions = connectionState == .closed ? [] : session.pushed(message)
            guard !actions.isEmpty else {
                completion?()
                return publish()
            }
            if let completion { pushCompletions[id] = completion }
            perform(actions)
        }
        return true
    }

    /// Closes the connection for good; `state` becomes `.closed`.
    public func close() {
        queue.async { [self] in closeNow(waiter: nil) }
    }

    /// Closes as `close()` does and returns once the hub has answered the close (or `timeout`
    /// passed): what a tool that exits right after needs, so that what it sent last (a
    /// `rendered`, an ack) is read by the hub before the process goes. Not from a callback.
    public func closeAndWait(timeout: Duration = .seconds(2)) {
        let done = DispatchSemaphore(value: 0)
        queue.async { [self] in closeNow(waiter: done) }
        _ = done.wait(timeout: .now() + timeout.seconds)
    }

    private func closeNow(waiter: DispatchSemaphore?) {
        guard connectionState != .closed else {
            waiter?.signal()
            return
        }
        if connection != nil, let waiter {
            closeWaiters.append(waiter)
            closingGeneration = generation
        } else {
            waiter?.signal()
        }
        generation += 1
        reconnect?.cancel()
        livenessCheck?.cancel()
        connection?.close(code: 1000, reason: "")
        connection = nil
        session.end()
        for completion in pushCompletions.values { completion() }
        pushCompletions = [:]
        setState(.closed)
        emit(.closed(code: 1000, reason: "closed by the app", retryIn: nil, attempt: schedule.attempt, error: nil))
    }

    /// Waits until every call made before it has been handled (tests, orderly shutdown).
    public func flush() async {
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    }

    // MARK: - Connection

    private func open() {
        generation += 1
        let current = generation
        var headers = HeaderFields()
        let token = currentToken()
        if let token { headers.append(name: "Authorization", value: "Bearer \(token)") }
        // The user the token names; a token provider that returned none keeps the current one.
        if token != nil || !refreshesToken { enter(StorageScope(token: token, device: device)) }
        session.connecting(now: .now)
        armLivenessCheck()
        connection = transport.open(TransportRequest(url: url, subprotocol: "pushhub.v1", headers: headers)) {
            [self] event in
            queue.async { self.handle(event, generation: current, token: token) }
        }
    }

    /// Replaces the current connection with a new one at once (its hello must say something the
    /// old one's did not): the old one is closed, its events ignored.
    private func reopen() {
        let old = connection
        generation += 1
        connection = nil
        livenessCheck?.cancel()
        session.closed()
        old?.close(code: 1000, reason: "")
        setState(.reconnecting)
        open()
    }

    /// Uses `scope`'s storage from now on, if it is not the one in use (the first connection, or a
    /// token provider that now signs in another user).
    private func enter(_ scope: StorageScope) {
        guard scope != session.scope else { return }
        let record = ScopeRecord(stored: read(scope.recordKey))
        var stored: [String: StoredScreen] = [:]
        for screen in session.screens.keys { stored[screen] = self.stored(screen, in: scope) }
        perform(session.enter(scope, record: record, handled: handledSyncs(in: scope), stored: stored))
    }

    /// Arms one timer for the current connection's liveness deadline (replacing the armed one).
    private func armLivenessCheck() {
        livenessCheck?.cancel()
        guard let deadline = session.liveness.deadline else { return }
        let current = generation
        let check = DispatchWorkItem { [weak self] in self?.checkLiveness(generation: current) }
        livenessCheck = check
        queue.asyncAfter(deadline: .now() + max(.zero, deadline - .now).seconds, execute: check)
    }

    /// The liveness timer fired: give a silent connection up at once (no close handshake: its
    /// events are ignored from now on) and reconnect; otherwise check again at the new deadline.
    private func checkLiveness(generation current: Int) {
        guard current == generation, connectionState != .closed else { return }
        switch session.checkLink(now: .now) {
        case .closed: return
        case .alive: armLivenessCheck()
        case .dead(let silence):
            let abandoned = connection
            let heartbeat = session.liveness.heartbeat.seconds
            let reason = String(
                format: "nothing from the hub for %.1f s (heartbeat every %.0f s): the link is dead", silence.seconds,
                heartbeat)
            dropped(code: 1006, reason: reason)
            abandoned?.abandon()
        }
    }

    private func handle(_ event: TransportEvent, generation current: Int, token: String?) {
        if case .closed = event, current == closingGeneration {
            for waiter in closeWaiters { waiter.signal() }
            closeWaiters = []
        }
        guard current == generation, connectionState != .closed else { return }
        switch event {
        case .opened:
            perform(session.opened(token: token, device: device))
        case .text(let text):
            session.heard(now: .now)
            options.onMessage?(text)
            let message: JSONValue
            do {
                message = try JSONReader.parse(text, maxDepth: JSONReader.envelopeMaxDepth)
            } catch {
                return emit(.error(HubError(code: "bad_json", message: "the hub sent \(error)", ref: nil, screen: nil)))
            }
            let heartbeat = session.liveness.heartbeat
            let (actions, fatalError) = session.receive(message)
            if message["type"]?.stringValue == "welcome" {
                schedule.welcomed()
                fatal = nil
                setState(.live)
                if session.liveness.heartbeat != heartbeat { armLivenessCheck() }
            }
            if let fatalError, !(fatalError.code == "unauthorized" && refreshesToken) { fatal = fatalError }
            perform(actions)
        case .closed(let code, let reason):
            dropped(code: code, reason: reason)
        }
    }

    private func dropped(code: UInt16, reason: String) {
        generation += 1
        connection = nil
        livenessCheck?.cancel()
        session.closed()
        if let fatal {
            session.end()
            setState(.closed)
            return emit(.closed(code: code, reason: reason, retryIn: nil, attempt: schedule.attempt, error: fatal))
        }
        let delay = schedule.dropped(
            code: code, now: .now, random: options.random(), backoff: options.backoff,
            goingAwayCap: options.goingAwayCap, goingAwayWindow: options.goingAwayWindow)
        setState(.reconnecting)
        emit(.closed(code: code, reason: reason, retryIn: delay, attempt: schedule.attempt, error: nil))
        let retry = DispatchWorkItem { [weak self] in
            guard let self, self.connectionState != .closed else { return }
            self.open()
        }
        reconnect = retry
        queue.asyncAfter(deadline: .now() + delay.seconds, execute: retry)
    }

    // MARK: - Actions

    private func perform(_ actions: [ClientSession.Action]) {
        for action in actions {
            switch action {
            case .send(let message):
                connection?.send(text: JSONWriter.string(.object(message)))
            case .deliver(let screen, let tree, let meta):
                // Before the handlers run: a tree callback (or a thread it wakes) that asks
                // `isPending` must see the screen is no longer pending (it saw `true` until the
                // end of this perform, a race the test found 1 run in 5).
                published.withLock {
                    $0.trees[screen] = (tree, meta)
                    if meta.source != .cache { $0.pending.remove(screen) }
                }
                let handlers = (treeHandlers[screen] ?? [:]).sorted(by: { $0.key < $1.key }).map(\.value)
                render(screen, tree, meta, handlers: handlers, confirms: options.autoRendered && !handlers.isEmpty)
            case .schedule(let received):
                var waited = received
                waited.delayMs = options.waitsForJitter ? Int(Double(received.jitterMs) * options.random()) : 0
                let sync = waited
                queue.asyncAfter(deadline: .now() + .milliseconds(sync.delayMs)) { [self] in
                    guard connectionState != .closed else { return }
                    for handler in syncHandlers.sorted(by: { $0.key < $1.key }) { handler.value(sync) }
                    perform(session.syncHandled(sync.id))
                    pushCompletions.removeValue(forKey: sync.id)?()
                }
            case .pending(let screen):
                published.withLock { _ = $0.pending.insert(screen) }
                for handler in (pendingHandlers[screen] ?? [:]).sorted(by: { $0.key < $1.key }) { handler.value() }
            case .emit(let event):
                emit(event)
            case .store(let key, let value):
                write(key, value)
            }
        }
        publish()
    }

    /// Calls `handlers` with a tree of `screen`, each even if one before it threw. Then, for a tree
    /// the hub sent (not `.cache`): the first error thrown is reported as a `render_error`; with
    /// none, `confirms` sends `rendered`.
    private func render(
        _ screen: String, _ tree: JSONValue, _ meta: TreeMeta, handlers: [ThrowingTreeHandler], confirms: Bool
    ) {
        var failure: RenderErrorReport?
        for handler in handlers {
            do {
                try handler(tree, meta)
            } catch {
                if failure == nil { failure = RenderErrorReport(error) }
            }
        }
        guard meta.source != .cache else { return }
        if let failure {
            perform(session.renderFailed(screen, version: meta.version, report: failure, hash: meta.hash))
        } else if confirms {
            perform(session.rendered(screen, version: meta.version))
        }
    }

    private func emit(_ event: ClientEvent) {
        if case .welcome(let welcome) = event { published.withLock { $0.welcome = welcome } }
        for handler in eventHandlers.sorted(by: { $0.key < $1.key }) { handler.value(event) }
    }

    private func setState(_ new: ConnectionState) {
        guard connectionState != new else { return }
        connectionState = new
        publish()
        emit(.state(new))
    }

    /// Copies what other threads may read from the session: trees it no longer holds (another
    /// user's, another epoch's, a pending screen's) are no longer `current`.
    private func publish() {
        let (stats, lastSync, live, state, screens) =
            (session.stats, session.lastSync, session.live, connectionState, session.screens)
        published.withLock {
            $0.state = state
            $0.stats = stats
            $0.lastSync = lastSync
            if !live { $0.welcome = nil }
            $0.trees = $0.trees.filter { screens[$0.key]?.tree != nil }
            $0.pending = $0.pending.filter { screens[$0]?.pending == true }
        }
    }

    fileprivate func unsubscribe(_ screen: String, id: Int) {
        queue.async { [self] in
            pendingHandlers[screen]?[id] = nil
            guard treeHandlers[screen]?.removeValue(forKey: id) != nil, treeHandlers[screen]?.isEmpty == true else {
                return
            }
            treeHandlers[screen] = nil
            pendingHandlers[screen] = nil
            published.withLock { _ = $0.trees.removeValue(forKey: screen) }
            perform(session.unsubscribe(screen))
        }
    }

    // MARK: - Identity and storage

    private var refreshesToken: Bool {
        if case .tokenProvider = credentials { return true }
        return false
    }

    func currentToken() -> String? {
        switch credentials {
        case .token(let token, _): token
        case .tokenProvider(let provide, _): provide()
        case .device, .anonymous: nil
        }
    }

    /// The device id: given, or (anonymous, or signed in with a push token) the one kept in
    /// storage, generated once.
    private func identity(hasPushToken: Bool) -> String? {
        switch credentials {
        case .device(let device), .token(_, let device?), .tokenProvider(_, let device?): return device
        case .token, .tokenProvider: return hasPushToken ? storedDevice() : nil
        case .anonymous: return storedDevice()
        }
    }

    /// The device id kept in storage, generated (and stored) when there is none.
    private func storedDevice() -> String {
        if let device = read(StorageScope.deviceKey) { return device }
        let device = "d-" + (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        write(StorageScope.deviceKey, device)
        return device
    }

    /// The ids of the last syncs handed to the app in `scope`, oldest first (none when unreadable).
    private func handledSyncs(in scope: StorageScope) -> [String] {
        guard let text = read(scope.handledSyncsKey), case .array(let ids)? = try? JSONReader.parse(text) else {
            return []
        }
        return ids.compactMap(\.stringValue)
    }

    /// What `scope`'s storage holds for `screen` if its tree still hashes right (else it is removed).
    func stored(_ screen: String, in scope: StorageScope) -> StoredScreen? {
        guard scope != .none, let text = read(scope.screenKey(screen)) else { return nil }
        guard let parsed = StoredScreen(stored: text) else {
            write(scope.screenKey(screen), nil)
            return nil
        }
        return parsed
    }

    func read(_ key: String) -> String? {
        do {
            return try storage.value(forKey: key)
        } catch {
            emit(.error(HubError(code: "storage", message: "reading \(key): \(error)", ref: nil, screen: nil)))
            return nil
        }
    }

    func write(_ key: String, _ value: String?) {
        do {
            if let value { try storage.set(value, forKey: key) } else { try storage.removeValue(forKey: key) }
        } catch {
            emit(.error(HubError(code: "storage", message: "writing \(key): \(error)", ref: nil, screen: nil)))
        }
    }

    private func handlerID() -> Int {
        handlerIDs.withLock { id in
            id += 1
            return id
        }
    }
}

/// One `subscribe` call: `current` is the latest tree it was given; `close()` removes its callback.
public final class Subscription: Sendable {
    public let screen: String
    private let id: Int
    private let client: PushHubClient

    fileprivate init(screen: String, id: Int, client: PushHubClient) {
        self.screen = screen
        self.id = id
        self.client = client
    }

    /// The latest tree of the screen with its version and hash (nil until one arrived).
    public var current: (tree: JSONValue, meta: TreeMeta)? { client.current(screen) }

    /// Whether the hub said the screen has no version yet (until its first publish arrives).
    public var isPending: Bool { client.isPending(screen) }

    public func close() { client.unsubscribe(screen, id: id) }
}

/// Undoes a registration (`onSync`, `on`).
public struct Cancellation: Sendable {
    private let cancel: @Sendable () -> Void

    init(_ cancel: @escaping @Sendable () -> Void) { self.cancel = cancel }

    public func callAsFunction() { cancel() }
}

extension PushHubClient {
    fileprivate func current(_ screen: String) -> (tree: JSONValue, meta: TreeMeta)? {
        published.withLock { $0.trees[screen] }
    }

    fileprivate func isPending(_ screen: String) -> Bool {
        published.withLock { $0.pending.contains(screen) }
    }
}
