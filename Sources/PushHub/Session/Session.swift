import Glibc
import WSProtocol

/// The v1 client session on `/v1/connect` (DESIGN §3) as a state machine (STYLE §3): one
/// mutating method per input, each appending the actions it decides to `out`; no socket, loop or
/// clock inside (`now` is a parameter). `Connection` and the loop's `Shard` perform the actions.
/// (Inputs that change only the boxed ready state are mutating too: the call then works in
/// place on the connection's session instead of on a copy.)
///
/// Invariants: nothing but `hello` is served before `.ready` (`hello_first`); in `.ready`, each
/// subscription holds the version and rendition the client was last brought to, and a newer
/// version is sent as a patch from exactly that version (or one catch-up once a congested
/// connection drains); a subscription moves to a version only with a message the client
/// receives, so a patch's `from` is always the version the client holds; after `.closed` no
/// input produces an action.
struct Session {
    enum State {
        /// Until hello: its deadline (monotonic ns) and the token of the upgrade request, if any.
        /// `indirect`: boxed until the hello, so that a signed-in session carries 8 bytes of state
        /// in its connection, not 25 (memory per connection, DESIGN §9).
        indirect case awaitingHello(deadline: UInt64, upgradeToken: String?)
        case ready(ReadySession)
        case closed
    }

    enum Action {
        /// Queue this frame (shared frames are queued by reference).
        case send([UInt8])
        /// Send what is queued, then close with this code (1008 for refusals and the hello timeout).
        case close(CloseCode, reason: String)
        /// The client is signed in: index it on the loop (user → connections) for targeting.
        /// (Payloads are small — large ones are boxed — so that actions are cheap to copy.)
        case signedIn(ReadySession)
        /// Subscriptions and the render target each is seen as (the loop counts targets in use,
        /// so the control plane prepares those renditions for the next publish).
        case subscribed(String, RenderTarget)
        /// A subscription to a screen that has no version yet (DESIGN §3 as refined in
        /// protocol.md): the loop indexes it so that the first publish brings its snapshot.
        case awaitsScreen(String)
        /// The client no longer waits for that screen (unsubscribed, or it was published).
        case stoppedAwaiting(String)
        /// The client asked for `heartbeat` messages (the connection sends them with its pings).
        case sendHeartbeats
        case retargeted(Retarget)
        case unsubscribed(String, RenderTarget)
        /// Receipts (DESIGN §5): a sync was queued for the client, or acknowledged by it.
        case delivered(Sync)
        case acked(Sync)
        /// For the control plane: an exposure line, a sticky first assignment.
        case exposure(Exposure)
        case stickyAssigned(experiment: String, unit: String, variant: String)
        /// An update was held back because the connection is congested (a catch-up follows).
        case coalesced
        /// A subscribe was refused at the per-connection limit (counted in /metrics).
        case subscriptionRefused
    }

    /// What every session of a loop shares: fixed at start.
    struct Settings {
        var allowAnonymous: Bool
        var heartbeatSeconds: Int
        var tokens: JWTVerifier
        /// The identity of the hub state (`welcome.epoch`): a data dir's journal, or a cluster's.
        var epoch = ""
        /// Screens one session may subscribe to at once (DESIGN §9 limits).
        var maxSubscriptions = HubConfig.defaultMaxSubscriptions
    }

    private(set) var state: State

    init(helloDeadline: UInt64, upgradeToken: String?) {
        state = .awaitingHello(deadline: helloDeadline, upgradeToken: upgradeToken)
    }

    /// The signed-in session, if any.
    var ready: ReadySession? {
        if case .ready(let ready) = state { return ready }
        return nil
    }

    /// The deadline `timerFired` acts on.
    var helloDeadline: UInt64? {
        if case .awaitingHello(let deadline, _) = state { return deadline }
        return nil
    }

    // MARK: - Client messages

    /// A message that is not a valid v1 message (binary, bad JSON, missing fields).
    func receivedInvalid(_ error: WireError, out: inout [Action]) {
        guard !isClosed else { return }
        out.append(.send(ServerMessage.error(error)))
    }

    /// A parsed client message; `nowMilliseconds` is wall-clock time (token expiry, logs).
    mutating func received(
        _ message: ClientMessage, view: HubView, settings: Settings, nowMilliseconds: Int,
        cache: inout RenditionCache, out: inout [Action]
    ) {
        switch (state, message) {
        case (.awaitingHello(_, let upgradeToken), .hello(let hello)):
            helloReceived(
                hello, upgradeToken: upgradeToken, view: view, settings: settings, nowMilliseconds: nowMilliseconds,
                out: &out)
        case (.awaitingHello, _):
            out.append(error("hello_first", "say hello before anything else", ref: message.typeName))
        case (.ready, .hello):
            out.append(error("already_hello", "this session already said hello", ref: "hello"))
        case (.ready(let ready), .subscribe(let screen, let have)):
            let held = ready.subscriptions.count + ready.awaitedCount
            guard ready.index(of: screen) != nil || ready.isAwaiting(screen) || held < settings.maxSubscriptions else {
                out.append(
                    error(
                        "too_many_subscriptions",
                        "this connection holds \(held) subscriptions, the most the hub allows; unsubscribe first",
                        ref: "subscribe"))
                out.append(.subscriptionRefused)
                return
            }
            subscribe(
                ready, screen, have: have, view: view, nowMilliseconds: nowMilliseconds, cache: &cache, out: &out)
        case (.ready(let ready), .unsubscribe(let screen)):
            if let index = ready.index(of: screen) {
                let removed = ready.subscriptions.remove(at: index)
                out.append(.unsubscribed(screen, removed.target))
            } else if ready.stopAwaiting(screen) {
                out.append(.stoppedAwaiting(screen))
            } else {
                out.append(error("not_subscribed", "not subscribed to \(screen)", ref: "unsubscribe"))
            }
        case (.ready(let ready), .ack(let id)):
            guard let sync = view.syncs.find(id) else {
                out.append(error("unknown_sync", "no live sync \(id)", ref: "ack"))
                return
            }
            if ready.memory.acked.insert(id).inserted { out.append(.acked(sync)) }
        case (.ready(let ready), .rendered(let screen, let version)):
            confirmExposures(ready, screen: screen, version: version, nowMilliseconds: nowMilliseconds, out: &out)
        case (.closed, _):
            break
        }
    }

    private mutating func helloReceived(
        _ hello: ClientMessage.Hello, upgradeToken: String?, view: HubView, settings: Settings,
        nowMilliseconds: Int, out: inout [Action]
    ) {
        guard hello.protocolVersion == 1 else {
            refuse("unsupported_protocol", "this hub speaks protocol 1, not \(hello.protocolVersion)",
                reason: "unsupported protocol", out: &out)
            return
        }
        let device = hello.device ?? ""
        let identity: ClientIdentity
        do {
            identity = try ClientIdentity.resolve(
                token: hello.token ?? upgradeToken, device: device, settings: settings, nowSeconds: nowMilliseconds / 1000)
        } catch .missingDevice {
            out.append(error("bad_message", "an anonymous hello needs \"device\" (the unit id)", ref: "hello"))
            return
        } catch {
            refuse("unauthorized", error.message, reason: "unauthorized", out: &out)
            return
        }
        let (user, claimCohorts, claims) = (identity.user, identity.claimCohorts, identity.claims)
        var appVersion: SemanticVersion?
        if let text = hello.appVersion {
            guard let version = SemanticVersion(text) else {
                out.append(error("bad_message", "app.version \"\(text)\" is not a semantic version", ref: "hello"))
                return
            }
            appVersion = version
        }
        let attributes = ClientAttributes(
            session: Self.newSessionID(), user: user, device: device, platform: hello.platform,
            appVersion: appVersion, claimCohorts: claimCohorts, claims: claims,
            connectedAt: nowMilliseconds)
        let ready = ReadySession(attributes: attributes)
        state = .ready(ready)
        out.append(.signedIn(ready))
        if hello.wantsHeartbeats { out.append(.sendHeartbeats) }
        out.append(
            .send(
                ServerMessage.welcome(
                    session: attributes.session, user: user, heartbeatSeconds: settings.heartbeatSeconds,
                    syncSeq: view.syncs.lastSeq, epoch: settings.epoch)))
        // Continuity (DESIGN §5): what was missed since last_sync; without it, what names this user.
        // The view holds every sync this loop has applied; any later one arrives as `syncArrived`
        // now that the client is signed in, so none falls between the two.
        let missed: [(sync: Sync, mandatory: Bool)]
        if let lastSync = Self.trustedLastSync(hello, epoch: settings.epoch, lastSeq: view.syncs.lastSeq) {
            missed = view.syncs.missed(after: lastSync, now: nowMilliseconds) { view.matches($0.target, attributes) }
        } else if let user {
            missed = view.syncs.missed(after: 0, now: nowMilliseconds) {
                $0.target.namesUser(user) && view.matches($0.target, attributes)
            }
        } else {
            missed = []
        }
        for (sync, mandatory) in missed {
            out.append(.send(sync.frame(mandatory: mandatory)))
            out.append(.delivered(sync))
        }
    }

    /// The `last_sync` a hello may be served from, or 0 — "replay every kept sync that targets
    /// you" — when it cannot be from this hub state: counted in another epoch (another data dir
    /// or cluster, a reset state), or above the last seq this state gave out. Trusting it there
    /// would skip the hotfixes the client missed. Older clients send no epoch: only the bound holds.
    static func trustedLastSync(_ hello: ClientMessage.Hello, epoch: String, lastSeq: Int) -> Int? {
        guard let lastSync = hello.lastSync else { return nil }
        if let theirs = hello.epoch, theirs != epoch { return 0 }
        return lastSync > lastSeq ? 0 : lastSync
    }

    private func subscribe(
        _ ready: ReadySession, _ screen: String, have: ClientMessage.Have?, view: HubView, nowMilliseconds: Int,
        cache: inout RenditionCache, out: inout [Action]
    ) {
        if let problem = ScreenName.validationError(screen) {
            out.append(error("invalid_screen_name", problem, ref: "subscribe"))
            return
        }
        guard let current = view.current(screen) else {
            // Not published yet: the subscription waits for the first version (it counts
            // against the subscription limit meanwhile).
            if ready.index(of: screen) == nil, !ready.isAwaiting(screen) {
                ready.memory.awaitedScreens.append(screen)
                out.append(.awaitsScreen(screen))
            }
            out.append(.send(ServerMessage.pending(screen: screen)))
            return
        }
        let (target, variants) = renderTarget(ready, screen, view: view, out: &out)
        let rendered = cache.rendered(current, for: target)
        if let hash = have?.hash, hash == rendered.hash {
            out.append(.send(ServerMessage.unchanged(screen: screen, version: current.version, hash: hash)))
        } else if let version = have?.version, let old = view.version(screen, version),
            have?.hash == nil || cache.rendered(old, for: target).hash == have?.hash
        {
            out.append(
                .send(
                    cache.update(from: old, to: current, for: target)
                        ?? ServerMessage.unchanged(screen: screen, version: current.version, hash: rendered.hash)))
        } else {
            out.append(.send(cache.snapshot(current, for: target)))
        }
        noteExposures(ready, variants, screen: screen, version: current.version, nowMilliseconds: nowMilliseconds,
            out: &out)
        let subscription = ReadySession.Subscription(version: current, target: target)
        if let index = ready.index(of: screen) {
            let old = ready.subscriptions[index].target
            ready.subscriptions[index] = subscription
            if old != target { out.append(.retargeted(Retarget(screen: screen, from: old, to: target))) }
        } else {
            ready.subscriptions.append(subscription)
            out.append(.subscribed(screen, target))
        }
    }

    // MARK: - Hub events

    /// A newer version of a screen was published; `memo` carries the frame of the previous
    /// subscriber across one fan-out (same starting point and rendition: same bytes).
    mutating func versionPublished(
        _ version: ScreenVersion, view: HubView, isCongested: Bool, nowMilliseconds: Int, memo: inout FanoutMemo,
        cache: inout RenditionCache, out: inout [Action]
    ) {
        guard case .ready(let ready) = state, let index = ready.index(of: version.name) else { return }
        let had = ready.subscriptions[index]
        guard had.version.version < version.version else { return }
        if isCongested {
            // DESIGN §9: above the high watermark the latest state supersedes; one catch-up goes
            // out from what the client has once its buffer drains.
            ready.needsCatchUp = true
            out.append(.coalesced)
            return
        }
        let (target, variants) = renderTarget(
            ready, version.name, experiments: memo.experiments(touching: version.name, in: view), view: view, out: &out)
        noteExposures(ready, variants, screen: version.name, version: version.version,
            nowMilliseconds: nowMilliseconds, out: &out)
        // A version that does not change what this client sees sends nothing, and the
        // subscription stays where the client is: the next patch starts from the version it holds.
        guard let frame = memo.frame(from: had.version, had.target, to: version, target, cache: &cache) else { return }
        ready.subscriptions[index] = ReadySession.Subscription(version: version, target: target)
        if had.target != target {
            out.append(.retargeted(Retarget(screen: version.name, from: had.target, to: target)))
        }
        out.append(.send(frame))
    }

    /// Experiments touching `screen` changed: send a patch if what this client sees changed.
    mutating func experimentsChanged(
        screen: String, view: HubView, isCongested: Bool, nowMilliseconds: Int, cache: inout RenditionCache,
        out: inout [Action]
    ) {
        guard case .ready(let ready) = state, let index = ready.index(of: screen), let current = view.current(screen)
        else { return }
        if isCongested {
            ready.needsCatchUp = true
            out.append(.coalesced)
            return
        }
        bringUpToDate(ready, at: index, current, view: view, nowMilliseconds: nowMilliseconds, cache: &cache, out: &out)
    }

    /// The first version of a screen this client waits for was published: its snapshot.
    mutating func awaitedScreenPublished(
        _ screen: String, view: HubView, nowMilliseconds: Int, cache: inout RenditionCache, out: inout [Action]
    ) {
        guard case .ready(let ready) = state, ready.stopAwaiting(screen) else { return }
        out.append(.stoppedAwaiting(screen))
        subscribe(ready, screen, have: nil, view: view, nowMilliseconds: nowMilliseconds, cache: &cache, out: &out)
    }

    /// The screen was deleted: the client is told it is `gone` and unsubscribed.
    mutating func screenDeleted(_ screen: String, out: inout [Action]) {
        guard case .ready(let ready) = state, let index = ready.index(of: screen) else { return }
        let removed = ready.subscriptions.remove(at: index)
        out.append(.unsubscribed(screen, removed.target))
        out.append(.send(ServerMessage.gone(screen: screen)))
    }

    /// A sync targeting this client arrived (live, or after its spread delay).
    mutating func syncArrived(_ sync: Sync, isCongested: Bool, out: inout [Action]) {
        guard case .ready(let ready) = state else { return }
        guard let key = sync.collapse else {
            out.append(.send(sync.frame(mandatory: sync.mandatory)))
            out.append(.delivered(sync))
            return
        }
        // DESIGN §5, §9: syncs with one collapse key stand for each other; of a held one and this
        // one the newer (by seq: a spread sync may arrive after a newer one) survives, mandatory
        // if either was.
        var survivor = (sync: sync, mandatory: sync.mandatory)
        if let held = ready.memoryIfAny?.collapsedSyncs.removeValue(forKey: key) {
            survivor = (held.sync.seq > sync.seq ? held.sync : sync, held.mandatory || sync.mandatory)
        }
        if isCongested {
            // Held while congested; the survivor is sent at catch-up.
            ready.memory.collapsedSyncs[key] = survivor
            ready.needsCatchUp = true
            out.append(.coalesced)
            return
        }
        out.append(.send(survivor.sync.frame(mandatory: survivor.mandatory)))
        out.append(.delivered(survivor.sync))
    }

    /// Whether `drained` has catching up to do.
    var needsCatchUp: Bool { ready?.needsCatchUp ?? false }

    /// The outbound queue drained after updates were held back: the newest collapsed syncs, then
    /// every subscription brought from the version the client has to the current one.
    mutating func drained(view: HubView, nowMilliseconds: Int, cache: inout RenditionCache, out: inout [Action]) {
        guard case .ready(let ready) = state, ready.needsCatchUp else { return }
        ready.needsCatchUp = false
        for (sync, mandatory) in (ready.memoryIfAny?.collapsedSyncs.values.sorted { $0.sync.seq < $1.sync.seq } ?? []) {
            out.append(.send(sync.frame(mandatory: mandatory)))
            out.append(.delivered(sync))
        }
        ready.memoryIfAny?.collapsedSyncs.removeAll()
        for index in ready.subscriptions.indices {
            guard let current = view.current(ready.subscriptions[index].version.name) else { continue }
            bringUpToDate(
                ready, at: index, current, view: view, nowMilliseconds: nowMilliseconds, cache: &cache, out: &out)
        }
    }

    /// A timer fired: past the hello deadline, a client that has not said hello is closed (1008).
    mutating func timerFired(now: UInt64, out: inout [Action]) {
        guard case .awaitingHello(let deadline, _) = state, now >= deadline else { return }
        state = .closed
        out.append(.close(.policyViolation, reason: "hello timeout"))
    }

    /// The connection is closing: nothing more is sent.
    mutating func closed() { state = .closed }

    var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    // MARK: - Rendering and exposures

    private func bringUpToDate(
        _ ready: ReadySession, at index: Int, _ current: ScreenVersion, view: HubView, nowMilliseconds: Int,
        cache: inout RenditionCache, out: inout [Action]
    ) {
        let had = ready.subscriptions[index]
        let (target, variants) = renderTarget(ready, current.name, view: view, out: &out)
        // Before the early return: a unit that joins a variant whose tree equals what it holds
        // (control, on a traffic ramp) gets no patch, yet is served that variant from now on.
        noteExposures(ready, variants, screen: current.name, version: current.version,
            nowMilliseconds: nowMilliseconds, out: &out)
        guard current !== had.version || target != had.target else { return }
        // As in `versionPublished`: the subscription moves only with a message the client gets.
        guard let frame = cache.update(from: had.version, oldTarget: had.target, to: current, newTarget: target)
        else { return }
        ready.subscriptions[index] = ReadySession.Subscription(version: current, target: target)
        if had.target != target {
            out.append(.retargeted(Retarget(screen: current.name, from: had.target, to: target)))
        }
        out.append(.send(frame))
    }

    /// What this client is rendered as on `screen`, and the variants it is exposed to there.
    /// Assignments are cached per experiment change (DESIGN §6 is pure, so this is a cache).
    private func renderTarget(_ ready: ReadySession, _ screen: String, view: HubView, out: inout [Action])
        -> (RenderTarget, VariantView)
    {
        renderTarget(ready, screen, experiments: view.experiments.touching[screen], view: view, out: &out)
    }

    /// The same, given the running experiments that touch `screen` (looked up once per fan-out).
    private func renderTarget(
        _ ready: ReadySession, _ screen: String, experiments: [Experiment]?, view: HubView, out: inout [Action]
    ) -> (RenderTarget, VariantView) {
        guard let experiments else { return (ready.target, VariantView()) }
        let client = ready.attributes
        let unit = client.user ?? client.device
        let variants = view.variants(on: screen, experiments: experiments) { experiment, label in
            if let cached = ready.memory.assignments[label] { return cached }
            let outcome = view.assignment(experiment, unit: unit, client: client)
            if experiment.sticky, let variant = outcome.variant, outcome.reason != "sticky",
                experiment.overrides[unit] == nil
            {
                out.append(.stickyAssigned(experiment: experiment.key, unit: unit, variant: variant))
            }
            ready.memory.assignments[label] = .some(outcome.variant)
            return outcome.variant
        }
        var target = ready.target
        target.variantPatches = variants.patches
        return (target, variants)
    }

    /// The first exposure of this session to each experiment on `screen` (DESIGN §6).
    private func noteExposures(
        _ ready: ReadySession, _ variants: VariantView, screen: String, version: Int, nowMilliseconds: Int,
        out: inout [Action]
    ) {
        for (experiment, variant) in variants.exposures {
            let key = experiment + "|" + screen
            if let known = ready.memory.exposed[key], known.variant == variant { continue }
            ready.memory.exposed[key] = (variant, version, false)
            out.append(
                .exposure(
                    Exposure(
                        event: .served, experiment: experiment, variant: variant, unit: ready.unit, screen: screen,
                        version: version, at: nowMilliseconds)))
        }
    }

    /// The client rendered `version` of `screen`: its exposures there are confirmed.
    private func confirmExposures(
        _ ready: ReadySession, screen: String, version: Int, nowMilliseconds: Int, out: inout [Action]
    ) {
        for (key, exposure) in ready.memory.exposed
        where !exposure.confirmed && key.hasSuffix("|" + screen) && version >= exposure.version {
            ready.memory.exposed[key]?.confirmed = true
            out.append(
                .exposure(
                    Exposure(
                        event: .confirmed, experiment: String(key.dropLast(screen.count + 1)),
                        variant: exposure.variant, unit: ready.unit, screen: screen, version: version,
                        at: nowMilliseconds)))
        }
    }

    // MARK: - Helpers

    private func error(_ code: String, _ message: String, ref: String?) -> Action {
        .send(ServerMessage.error(WireError(code: code, message: message, ref: ref)))
    }

    /// Identity and protocol refusals: an error, then close 1008 (policy).
    private mutating func refuse(_ code: String, _ message: String, reason: String, out: inout [Action]) {
        out.append(error(code, message, ref: "hello"))
        out.append(.close(.policyViolation, reason: reason))
        state = .closed
    }

    /// "s-" and 13 base-62 characters (77 random bits): 15 bytes, which Swift stores inline. The
    /// bits come from glibc's `arc4random_buf` (a per-thread ChaCha20 state the kernel seeds), not
    /// from a `getrandom` system call per character.
    static func newSessionID() -> String {
        var random = (UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &random) { arc4random_buf($0.baseAddress!, $0.count) }
        let alphabet: StaticString = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
        return String(unsafeUninitializedCapacity: 15) { id in
            id[0] = UInt8(ascii: "s")
            id[1] = UInt8(ascii: "-")
            var (high, low) = random
            for i in 2..<15 {
                // 13 digits of base 62 from 128 random bits (the first 10 from `low`, the rest from `high`).
                let source = i < 12 ? low : high
                id[i] = alphabet.utf8Start[Int(source % 62)]
                if i < 12 { low /= 62 } else { high /= 62 }
            }
            return 15
        }
    }
}

/// A subscription now seen as another render target (an experiment or app-version change).
final class Retarget {
    let screen: String
    let from: RenderTarget
    let to: RenderTarget

    init(screen: String, from: RenderTarget, to: RenderTarget) {
        self.screen = screen
        self.from = from
        self.to = to
    }
}

/// A session after its hello: identity, subscriptions, and what it acknowledged and was exposed
/// to. Boxed, so that connections that never say hello do not carry it; what most sessions
/// never need (acks, experiments, collapsed syncs) is boxed again, on first use.
///
/// Invariant: owned by one session on one loop (never shared); `subscriptions` names each screen
/// at most once.
final class ReadySession {
    /// One subscribed screen: the version and rendition the client was last brought to.
    struct Subscription {
        var version: ScreenVersion
        var target: RenderTarget
    }

    /// What a session remembers beyond its identity and subscriptions.
    final class Memory {
        /// Syncs this connection acknowledged (each counts once).
        var acked: Set<String> = []
        /// Variant assignments, per experiment as of its last change ("key@changedAt"); nil: not in it.
        var assignments: [String: String?] = [:]
        /// Exposures logged, per "experiment|screen": the variant and the version served, and
        /// whether a `rendered` confirmed it.
        var exposed: [String: (variant: String, version: Int, confirmed: Bool)] = [:]
        /// Syncs held back while the connection was congested, newest per collapse key.
        var collapsedSyncs: [String: (sync: Sync, mandatory: Bool)] = [:]
        /// Updates were held back while congested; `Session.drained` catches up.
        var needsCatchUp = false
        /// Screens subscribed to before their first version (each once, none also subscribed).
        var awaitedScreens: [String] = []
    }

    let attributes: ClientAttributes
    var subscriptions = SubscriptionList()
    /// Made on first use (`memory`); `memoryIfAny` reads without making it.
    private(set) var memoryIfAny: Memory?

    var memory: Memory {
        if let memoryIfAny { return memoryIfAny }
        let made = Memory()
        memoryIfAny = made
        return made
    }
    /// Updates were held back while congested (kept in `memory`: this object's 200 bytes fill
    /// a 208-byte malloc chunk, and one byte more would take the next, 16 bytes larger).
    var needsCatchUp: Bool {
        get { memoryIfAny?.needsCatchUp ?? false }
        set {
            if newValue { memory.needsCatchUp = true } else { memoryIfAny?.needsCatchUp = false }
        }
    }

    init(attributes: ClientAttributes) { self.attributes = attributes }

    /// What the client is rendered as before experiments (its app version).
    var target: RenderTarget { RenderTarget(appVersion: attributes.appVersion) }

    /// The unit experiments assign (DESIGN §6): the user, or the device of an anonymous client.
    var unit: String { attributes.user ?? attributes.device }

    func index(of screen: String) -> Int? { subscriptions.index(of: screen) }

    /// How many subscriptions wait for a screen's first version.
    var awaitedCount: Int { memoryIfAny?.awaitedScreens.count ?? 0 }

    func isAwaiting(_ screen: String) -> Bool { memoryIfAny?.awaitedScreens.contains(screen) ?? false }

    /// Stops waiting for `screen`; whether it was awaited.
    func stopAwaiting(_ screen: String) -> Bool {
        guard let index = memoryIfAny?.awaitedScreens.firstIndex(of: screen) else { return false }
        memoryIfAny?.awaitedScreens.remove(at: index)
        return true
    }
}

/// A session's subscriptions: the first inline (most clients hold one), the rest in an array.
struct SubscriptionList: RandomAccessCollection, MutableCollection {
    private var first: ReadySession.Subscription?
    private var rest: [ReadySession.Subscription] = []

    var startIndex: Int { 0 }
    var endIndex: Int { first == nil ? 0 : 1 + rest.count }

    subscript(position: Int) -> ReadySession.Subscription {
        get { position == 0 ? first! : rest[position - 1] }
        set {
            if position == 0 { first = newValue } else { rest[position - 1] = newValue }
        }
    }

    /// Where `screen` is, looked up without copying subscriptions (fan-out asks once per subscriber).
    func index(of screen: String) -> Int? {
        guard first?.version.name == screen else {
            return rest.firstIndex { $0.version.name == screen }.map { $0 + 1 }
        }
        return 0
    }

    mutating func append(_ subscription: ReadySession.Subscription) {
        if first == nil { first = subscription } else { rest.append(subscription) }
    }

    @discardableResult
    mutating func remove(at position: Int) -> ReadySession.Subscription {
        let removed = self[position]
        if position > 0 {
            rest.remove(at: position - 1)
        } else if rest.isEmpty {
            first = nil
        } else {
            first = rest.removeFirst()
        }
        return removed
    }
}

/// The frame of the last subscriber in one fan-out, reused while the next one starts from the
/// same version and rendition and goes to the same rendition (DESIGN §4: encode once).
struct FanoutMemo {
    private var last: (from: ScreenVersion, fromTarget: RenderTarget, target: RenderTarget, frame: [UInt8]?)?
    /// The render targets met in this fan-out (each inserted once per computed frame, not per subscriber).
    private(set) var targets = Set<RenderTarget>()
    /// The running experiments touching the fanned-out screen, once looked up.
    private var touching: [Experiment]??

    mutating func experiments(touching screen: String, in view: HubView) -> [Experiment]? {
        if let touching { return touching }
        let found = view.experiments.touching[screen]
        touching = .some(found)
        return found
    }

    mutating func frame(
        from old: ScreenVersion, _ oldTarget: RenderTarget, to new: ScreenVersion, _ target: RenderTarget,
        cache: inout RenditionCache
    ) -> [UInt8]? {
        if let last, last.from === old, last.fromTarget == oldTarget, last.target == target { return last.frame }
        let frame = cache.update(from: old, oldTarget: oldTarget, to: new, newTarget: target)
        last = (old, oldTarget, target, frame)
        targets.insert(target)
        return frame
    }
}

extension ClientMessage {
    var typeName: String {
        switch self {
        case .hello: "hello"
        case .subscribe: "subscribe"
        case .unsubscribe: "unsubscribe"
        case .ack: "ack"
        case .rendered: "rendered"
        }
    }
}
