/// A session after its hello: identity, subscriptions, and what it acknowledged and was exposed
/// to. Boxed, so that sessions that never say hello do not carry it; what most sessions
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
        /// Exposures logged, per "experiment|screen": the phase (salt) and variant, the version
        /// served, and whether a `rendered` confirmed it.
        var exposed: [String: (salt: String, variant: String, version: Int, confirmed: Bool)] = [:]
        /// Syncs held back while the connection was congested, newest per collapse key.
        var collapsedSyncs: [String: (sync: Sync, mandatory: Bool)] = [:]
        /// Updates were held back while congested; `Session.drained` catches up.
        var needsCatchUp = false
        /// Screens subscribed to before their first version (each once, none also subscribed).
        var awaitedScreens: [String] = []
        /// What this session did with each release's candidate, per "screen|release" (each
        /// reported once).
        var releases: [String: ReleaseReports] = [:]
        /// The screens and versions ("screen|version") whose render errors went to the
        /// webhooks (each once; at most `Session.maxRenderErrorsReported`).
        var renderErrorsReported: Set<String> = []
    }

    let attributes: ClientAttributes
    /// What it renders (DESIGN §16), resolved from `attributes` and the view's registry; resolved
    /// again when the registry changes.
    var capabilities: Capabilities
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

    init(attributes: ClientAttributes, capabilities: Capabilities) {
        self.attributes = attributes
        self.capabilities = capabilities
    }

    /// What the client is rendered as before experiments (its capabilities).
    var target: RenderTarget { RenderTarget(capabilities: capabilities) }

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
