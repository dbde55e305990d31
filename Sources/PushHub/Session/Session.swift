import Glibc
import WSProtocol

/// The v1 client session on `/v1/connect` (DESIGN §3) as a state machine (STYLE §3): one
/// mutating method per input, each appending the actions it decides to `out`; no socket, loop or
/// clock inside (`now` is a parameter). The loop's `Shard` owns every session (in its
/// `SessionTable`), feeds it what the client and the hub do, and performs the actions on the
/// client's `WebSocketConnection`. (Inputs that change only the boxed ready state are mutating
/// too: the call then works in place in the shard's table instead of on a copy.)
///
/// This file holds the states, the actions and the client's messages; the other inputs and the
/// rendering they share are in `Session+Subscribe.swift`, `Session+HubEvents.swift`,
/// `Session+Continuity.swift` (what a reconnecting client missed) and `Session+Rendering.swift`.
///
/// Invariants: nothing but `hello` is served before `.ready` (`hello_first`) — while a hello
/// waits for a key (`.awaitingKey`), what the client sends is held, at most `maxHeldMessages`
/// messages, and served in order once it is signed in; in `.ready`, each
/// subscription holds the version and rendition the client was last brought to, and a newer
/// version is sent as a patch from exactly that version (or one catch-up once a congested
/// connection drains); a subscription moves to a version only with a message the client
/// receives, so a patch's `from` is always the version the client holds; after `.closed` no
/// input produces an action.
struct Session {
    enum State {
        /// Until hello: its deadline (monotonic ns) and the token of the upgrade request, if any.
        /// `indirect`: boxed until the hello, so that a session is one word in its shard's table,
        /// not 25 bytes (memory per connection, DESIGN §9).
        indirect case awaitingHello(deadline: UInt64, upgradeToken: String?)
        /// The hello's token names a kid no key has while the hub fetches a JWKS (DESIGN §18):
        /// parked until the control plane says a fetch ended (`keysRefreshed`), then verified
        /// once more; the hello deadline still applies.
        indirect case awaitingKey(ParkedHello)
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
        /// For the control plane: a result event (exposure or goal), a sticky first assignment.
        case result(ResultEvent, sessionWasServed: Bool)
        case stickyAssigned(experiment: String, unit: String, variant: String)
        /// An update was held back because the connection is congested (a catch-up follows).
        case coalesced
        /// A subscribe was refused at the per-connection limit (counted in /metrics).
        case subscriptionRefused
        /// For the control plane: the client registered a push token, or removed its registration.
        indirect case pushDeviceRegistered(PushDevice)
        case pushDeviceRemoved(DeviceKey)
        /// For the control plane: the app could not render a screen (webhooks, DESIGN §18).
        indirect case renderErrorReported(RenderErrorReport)
        /// The hello waits for a key with this kid: the loop keeps the connection among the parked
        /// ones and asks the control plane for the JWKS (`LoopEvent.unknownKeyID`).
        case awaitsKey(String)
    }

    /// A hello waiting for a key, with what the client sent after it.
    struct ParkedHello {
        var deadline: UInt64
        var hello: ClientMessage.Hello
        var upgradeToken: String?
        var kid: String
        var held: [ClientMessage] = []
    }

    /// Messages held after a parked hello; beyond, the client is refused (it should wait for
    /// its welcome; a client that streams without one is not honest).
    static let maxHeldMessages = 32

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
        switch state {
        case .awaitingHello(let deadline, _): deadline
        case .awaitingKey(let parked): parked.deadline
        case .ready, .closed: nil
        }
    }

    // MARK: - Client messages

    /// Push registrations are kept per device (DESIGN §17): the hello must have named one.
    private static var pushTokenNeedsDevice: Action {
        .send(
            ServerMessage.error(
                WireError(
                    code: "bad_message", message: "push_token needs a device id: send \"device\" in hello",
                    ref: "push_token")))
    }

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
                mayWaitForKey: true, cache: &cache, out: &out)
        case (.awaitingHello, _):
            out.append(error("hello_first", "say hello before anything else", ref: message.typeName))
        case (.awaitingKey(var parked), _):
            guard parked.held.count < Self.maxHeldMessages else {
                refuse(
                    "bad_message",
                    "the hub holds at most \(Self.maxHeldMessages) messages while it fetches the key of the hello's "
                        + "token; wait for welcome", reason: "too many messages before welcome", out: &out)
                return
            }
            parked.held.append(message)
            state = .awaitingKey(parked)
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
            reportRelease(
                ready, screen: screen, version: version, .rendered, view: view, nowMilliseconds: nowMilliseconds,
                out: &out)
        case (.ready(let ready), .track(let event, let value)):
            out.append(
                .result(
                    ResultEvent(.goal(event: event, value: value), unit: ready.unit, at: nowMilliseconds),
                    sessionWasServed: ready.memoryIfAny?.exposed.isEmpty == false))
        case (.ready(let ready), .renderError(let screen, let version, let component, let message)):
            out.append(
                .renderErrorReported(
                    RenderErrorReport(screen: screen, version: version, component: component, message: message)))
            reportRelease(
                ready, screen: screen, version: version, .errored(component: component, message: message), view: view,
                nowMilliseconds: nowMilliseconds, out: &out)
        case (.ready(let ready), .pushToken(let provider, let token, let topic)):
            let client = ready.attributes
            guard !client.device.isEmpty else { return out.append(Self.pushTokenNeedsDevice) }
            out.append(
                .pushDeviceRegistered(PushDevice(client, provider: provider, token: token, topic: topic, at: nowMilliseconds)))
        case (.ready(let ready), .pushTokenRemoved):
            let client = ready.attributes
            guard !client.device.isEmpty else { return out.append(Self.pushTokenNeedsDevice) }
            out.append(.pushDeviceRemoved(DeviceKey(user: client.user, device: client.device)))
        case (.closed, _):
            break
        }
    }

    /// - Parameter mayWaitForKey: a token naming an unknown kid parks the hello (the first
    ///   time) instead of refusing it (once the keys were fetched again).
    private mutating func helloReceived(
        _ hello: ClientMessage.Hello, upgradeToken: String?, view: HubView, settings: Settings,
        nowMilliseconds: Int, mayWaitForKey: Bool, cache: inout RenditionCache, out: inout [Action]
    ) {
        guard hello.protocolVersion == 1 else {
            refuse(
                "unsupported_protocol", "this hub speaks protocol 1, not \(hello.protocolVersion)",
                reason: "unsupported protocol", out: &out)
            return
        }
        let device = hello.device ?? ""
        let identity: ClientIdentity
        do {
            identity = try ClientIdentity.resolve(
                token: hello.token ?? upgradeToken, device: device, settings: settings,
                nowSeconds: nowMilliseconds / 1000, mayWaitForKey: mayWaitForKey)
        } catch .awaitingKey(let kid) {
            guard case .awaitingHello(let deadline, _) = state else { preconditionFailure("a hello is received once") }
            state = .awaitingKey(ParkedHello(deadline: deadline, hello: hello, upgradeToken: upgradeToken, kid: kid))
            out.append(.awaitsKey(kid))
            return
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
            connectedAt: nowMilliseconds, components: hello.components.map { cache.intern($0) })
        let ready = ReadySession(attributes: attributes, capabilities: cache.capabilities(of: attributes, view: view))
        state = .ready(ready)
        out.append(.signedIn(ready))
        if hello.wantsHeartbeats { out.append(.sendHeartbeats) }
        out.append(
            .send(
                ServerMessage.welcome(
                    session: attributes.session, user: user, heartbeatSeconds: settings.heartbeatSeconds,
                    syncSeq: view.syncs.lastSeq, epoch: settings.epoch)))
        // Continuity (DESIGN §5): what was missed since last_sync; without it, what names this user.
        let missed = Self.missedSyncs(hello, attributes, view: view, settings: settings, now: nowMilliseconds)
        for (sync, mandatory) in missed {
            out.append(.send(sync.frame(mandatory: mandatory)))
            out.append(.delivered(sync))
        }
    }

    /// The control plane says a JWKS fetch ended (or that none will run now): a parked hello is
    /// verified once more — signed in, then served what the client sent meanwhile, or refused
    /// (`unauthorized`, "no key with kid …") if its key is still unknown.
    mutating func keysRefreshed(
        view: HubView, settings: Settings, nowMilliseconds: Int, cache: inout RenditionCache, out: inout [Action]
    ) {
        guard case .awaitingKey(let parked) = state else { return }
        state = .awaitingHello(deadline: parked.deadline, upgradeToken: parked.upgradeToken)
        helloReceived(
            parked.hello, upgradeToken: parked.upgradeToken, view: view, settings: settings,
            nowMilliseconds: nowMilliseconds, mayWaitForKey: false, cache: &cache, out: &out)
        guard case .ready = state else { return }
        for message in parked.held {
            received(message, view: view, settings: settings, nowMilliseconds: nowMilliseconds, cache: &cache, out: &out)
        }
    }

    /// A timer fired: past the hello deadline, a client that has not said hello is closed (1008);
    /// one whose hello waits for a key is refused, naming the kid.
    mutating func timerFired(now: UInt64, out: inout [Action]) {
        switch state {
        case .awaitingHello(let deadline, _) where now >= deadline:
            state = .closed
            out.append(.close(.policyViolation, reason: "hello timeout"))
        case .awaitingKey(let parked) where now >= parked.deadline:
            refuse("unauthorized", JWTError.unknownKey(kid: parked.kid).description, reason: "unauthorized", out: &out)
        case .awaitingHello, .awaitingKey, .ready, .closed:
            break
        }
    }

    /// The connection is closing: nothing more is sent.
    mutating func closed() { state = .closed }

    var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    // MARK: - Helpers

    func error(_ code: String, _ message: String, ref: String?) -> Action {
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

extension ClientMessage {
    var typeName: String {
        switch self {
        case .hello: "hello"
        case .subscribe: "subscribe"
        case .unsubscribe: "unsubscribe"
        case .ack: "ack"
        case .rendered: "rendered"
        case .track: "track"
        case .renderError: "render_error"
        case .pushToken, .pushTokenRemoved: "push_token"
        }
    }
}
