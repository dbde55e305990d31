import WSProtocol

/// The v1 client session on `/v1/connect` (DESIGN §3): `hello` first, then subscriptions.
///
/// Invariants: `target` and `device` are set exactly when `state == .ready`; messages other
/// than `hello` before it are answered `hello_first`.
struct Session {
    enum State: Equatable { case awaitingHello, ready }

    var state = State.awaitingHello
    var target = RenderTarget.latest
    /// The token from the upgrade request (`Authorization: Bearer` or `?token=`), until hello.
    var upgradeToken: String?
    /// Everything known after hello, boxed so that connections that never say hello (the echo
    /// endpoint, idle sockets) do not carry it.
    var ready: ReadySession?

    var id: String { ready?.id ?? "" }
    var attributes: ClientAttributes? { ready?.attributes }
}

/// A session after its hello: identity, and what it acknowledged and was exposed to.
///
/// Invariant: owned by one connection on one loop (never shared).
final class ReadySession {
    let id: String
    let attributes: ClientAttributes
    /// Syncs this connection acknowledged (each counts once).
    var acked: Set<String> = []
    /// Variant assignments, per experiment as of its last change ("key@changedAt"); nil: not in it.
    var assignments: [String: String?] = [:]
    /// Exposures logged, per "experiment|screen": the variant and the version served, and
    /// whether a `rendered` confirmed it.
    var exposed: [String: (variant: String, version: Int, confirmed: Bool)] = [:]
    /// Syncs held back while the connection was congested, newest per collapse key.
    var collapsedSyncs: [String: (sync: Sync, mandatory: Bool)] = [:]

    init(id: String, attributes: ClientAttributes) {
        self.id = id
        self.attributes = attributes
    }
}

extension Connection {
    /// A text or binary message arrived on `/v1/connect`.
    func clientMessageReceived(_ opcode: Opcode, _ data: UnsafeRawBufferPointer) {
        guard opcode == .text else {
            send(
                error: WireError(
                    code: "bad_message", message: "protocol v1 messages are JSON text, not binary", ref: nil))
            return
        }
        let message: ClientMessage
        do {
            message = try ClientMessage.parse(data)
        } catch {
            send(error: error)
            return
        }
        switch (session.state, message) {
        case (.awaitingHello, .hello(let hello)):
            helloReceived(hello)
        case (.awaitingHello, _):
            send(
                error: WireError(code: "hello_first", message: "say hello before anything else", ref: message.typeName))
        case (.ready, .hello):
            send(error: WireError(code: "already_hello", message: "this session already said hello", ref: "hello"))
        case (.ready, .subscribe(let screen, let have)):
            subscribe(screen, have: have)
        case (.ready, .unsubscribe(let screen)):
            if !loop.subscriptions.remove(self, from: screen) {
                send(
                    error: WireError(code: "not_subscribed", message: "not subscribed to \(screen)", ref: "unsubscribe")
                )
            }
        case (.ready, .ack(let id)):
            acknowledged(id)
        case (.ready, .rendered(let screen, let version)):
            confirmExposures(screen: screen, version: version)
        }
    }

    private func helloReceived(_ hello: ClientMessage.Hello) {
        guard hello.protocolVersion == 1 else {
            refuse(
                "unsupported_protocol", "this hub speaks protocol 1, not \(hello.protocolVersion)",
                reason: "unsupported protocol")
            return
        }
        var user: String?
        var claimCohorts: [String] = []
        var claims = JSONObject()
        if let token = hello.token ?? session.upgradeToken {
            do {
                let verified = try loop.services.tokens.verify(token, now: WallClock.nowMilliseconds() / 1000)
                (user, claimCohorts, claims) = (verified.subject, verified.cohorts, verified.all)
            } catch {
                refuse("unauthorized", error.description, reason: "unauthorized")
                return
            }
        } else if !loop.config.allowAnonymous {
            refuse(
                "unauthorized", "this hub requires a token (hello.token, Authorization: Bearer, or ?token=)",
                reason: "unauthorized")
            return
        }
        let device = hello.device ?? ""
        guard user != nil || !device.isEmpty else {
            send(
                error: WireError(
                    code: "bad_message", message: "an anonymous hello needs \"device\" (the unit id)", ref: "hello"))
            return
        }
        var target = RenderTarget.latest
        if let text = hello.appVersion {
            guard let version = SemanticVersion(text) else {
                send(
                    error: WireError(
                        code: "bad_message", message: "app.version \"\(text)\" is not a semantic version", ref: "hello")
                )
                return
            }
            target.appVersion = version
        }
        let id = Self.newSessionID()
        let attributes = ClientAttributes(
            session: id, user: user, device: device, platform: hello.platform,
            appVersion: target.appVersion, appVersionText: hello.appVersion,
            claimCohorts: claimCohorts, claims: claims, connectedAt: WallClock.nowMilliseconds())
        session = Session(state: .ready, target: target, ready: ReadySession(id: id, attributes: attributes))
        helloDeadline = nil
        loop.services.online.add(OnlineIndex.Key(loop: loop.index, token: token), attributes)
        let syncs = loop.services.syncs
        queue(
            ServerMessage.welcome(
                session: id, user: user, heartbeatSeconds: Int(loop.config.pingInterval.components.seconds),
                syncSeq: syncs.lastSeq))
        // Continuity (DESIGN §5): what was missed since last_sync; without it, what names this user.
        let cohorts = loop.services.cohorts
        let missed: [(sync: Sync, mandatory: Bool)]
        if let lastSync = hello.lastSync {
            missed = syncs.missed(after: lastSync, now: WallClock.nowMilliseconds()) {
                $0.target.matches(attributes, cohorts: cohorts)
            }
        } else if let user {
            missed = syncs.missed(after: 0, now: WallClock.nowMilliseconds()) {
                $0.target.namesUser(user) && $0.target.matches(attributes, cohorts: cohorts)
            }
        } else {
            missed = []
        }
        for (sync, mandatory) in missed {
            queueShared(sync.frame(mandatory: mandatory))
            sync.receipts.delivered.add(1, ordering: .relaxed)
        }
    }

    /// Sends an error and closes with 1008 (policy): identity and protocol refusals.
    private func refuse(_ code: String, _ message: String, reason: String) {
        send(error: WireError(code: code, message: message, ref: "hello"))
        close(.policyViolation, reason: reason)
    }

    /// A sync reached this connection (live or after its spread delay).
    func deliver(_ sync: Sync) {
        guard session.state == .ready, closeHandshakeIsOpen, let ready = session.ready else { return }
        if isCongested, let key = sync.collapse {
            // DESIGN §9: while congested, syncs collapse by key; the newest is sent at catch-up,
            // mandatory if any collapsed one was.
            let mandatory = sync.mandatory || (ready.collapsedSyncs[key]?.mandatory ?? false)
            ready.collapsedSyncs[key] = (sync, mandatory)
            needsCatchUp = true
            loop.metrics.coalesced.add(1, ordering: .relaxed)
            return
        }
        send(sync, mandatory: sync.mandatory)
    }

    private func send(_ sync: Sync, mandatory: Bool) {
        queueShared(sync.frame(mandatory: mandatory))
        sync.receipts.delivered.add(1, ordering: .relaxed)
        loop.metrics.messagesOut.add(1, ordering: .relaxed)
    }

    private func acknowledged(_ id: String) {
        guard let sync = loop.services.syncs.find(id) else {
            send(error: WireError(code: "unknown_sync", message: "no live sync \(id)", ref: "ack"))
            return
        }
        if session.ready?.acked.insert(id).inserted == true { sync.receipts.acked.add(1, ordering: .relaxed) }
    }

    private func subscribe(_ screen: String, have: ClientMessage.Have?) {
        if let problem = ScreenName.validationError(screen) {
            send(error: WireError(code: "invalid_screen_name", message: problem, ref: "subscribe"))
            return
        }
        guard let current = loop.services.screens.current(screen) else {
            send(error: WireError(code: "unknown_screen", message: "no screen named \(screen)", ref: "subscribe"))
            return
        }
        let (target, view) = renderTarget(for: screen, in: loop.services.experiments.current)
        let rendered = current.rendered(for: target)
        if let hash = have?.hash, hash == rendered.hash {
            queue(ServerMessage.unchanged(screen: screen, version: current.version, hash: hash))
        } else if let version = have?.version, let old = loop.services.screens.version(screen, version),
            have?.hash == nil || old.rendered(for: target).hash == have?.hash
        {
            queueShared(
                Fanout.update(from: old, to: current, for: target)
                    ?? ServerMessage.unchanged(screen: screen, version: current.version, hash: rendered.hash))
        } else {
            queueShared(Fanout.snapshot(current, for: target))
        }
        noteExposures(view, screen: screen, version: current.version)
        loop.subscriptions.set(self, current, target)
    }

    /// What this client is rendered as on `screen` under `set`, and the variants it is exposed to.
    /// Assignments are computed once per experiment change (DESIGN §6 is pure, so this is a cache).
    func renderTarget(for screen: String, in set: ExperimentSet) -> (RenderTarget, VariantView) {
        guard let experiments = set.touching[screen], let client = session.attributes else {
            return (session.target, VariantView())
        }
        var view = VariantView()
        let unit = client.user ?? client.device
        for experiment in experiments {
            let label = "\(experiment.key)@\(set.changedAt[experiment.key] ?? 0)"
            let variant: String?
            if let cached = session.ready?.assignments[label] {
                variant = cached
            } else {
                variant =
                    loop.services.experiments.variant(
                        experiment, unit: unit, client: client, cohorts: loop.services.cohorts, remember: true
                    ).variant
                session.ready?.assignments[label] = .some(variant)
            }
            guard let variant else { continue }
            view.exposures.append((experiment.key, variant))
            if let patch = experiment.screens[screen]?[variant] {
                view.patches.append(VariantPatch(label: "\(label)=\(variant)", patch: patch))
            }
        }
        var target = session.target
        target.variantPatches = view.patches
        return (target, view)
    }

    /// Logs the first exposure of this session to each experiment on `screen` (DESIGN §6).
    func noteExposures(_ view: VariantView, screen: String, version: Int) {
        guard let ready = session.ready else { return }
        let client = ready.attributes
        for (experiment, variant) in view.exposures {
            let key = experiment + "|" + screen
            if let known = ready.exposed[key], known.variant == variant { continue }
            ready.exposed[key] = (variant, version, false)
            loop.services.exposures.served(
                experiment: experiment, variant: variant, unit: client.user ?? client.device, screen: screen,
                version: version, now: WallClock.nowMilliseconds())
        }
    }

    /// The client rendered `version` of `screen`: its exposures there are confirmed.
    private func confirmExposures(screen: String, version: Int) {
        guard let ready = session.ready else { return }
        let client = ready.attributes
        for (key, exposure) in ready.exposed
        where !exposure.confirmed && key.hasSuffix("|" + screen) && version >= exposure.version {
            ready.exposed[key]?.confirmed = true
            let experiment = String(key.dropLast(screen.count + 1))
            loop.services.exposures.confirmed(
                experiment: experiment, variant: exposure.variant, unit: client.user ?? client.device,
                screen: screen, version: version, now: WallClock.nowMilliseconds())
        }
    }

    /// The loop learned that a subscribed screen was deleted (already unsubscribed).
    func screenDeleted(_ name: String) {
        queueShared(ServerMessage.gone(screen: name))
    }

    /// Drops this connection's subscriptions and registration (it is going away).
    func unsubscribeAll() {
        if session.attributes != nil { loop.services.online.remove(OnlineIndex.Key(loop: loop.index, token: token)) }
        loop.subscriptions.removeAll(self)
    }

    private func send(error: WireError) { queue(ServerMessage.error(error)) }

    private func queue(_ frame: [UInt8]) {
        guard closeHandshakeIsOpen else { return }
        outbound.append { $0.append(contentsOf: frame) }
        loop.flushSoon(self)
    }

    /// The queue drained after updates were coalesced: bring every subscription from the version
    /// the client has to the current one with one patch (or snapshot) each.
    func catchUp() {
        needsCatchUp = false
        if let ready = session.ready, !ready.collapsedSyncs.isEmpty {
            for (sync, mandatory) in ready.collapsedSyncs.values.sorted(by: { $0.sync.seq < $1.sync.seq }) {
                send(sync, mandatory: mandatory)
            }
            ready.collapsedSyncs.removeAll()
        }
        let set = loop.services.experiments.current
        for index in subscribed.indices {
            let had = subscribed[index]
            guard let current = loop.services.screens.current(had.version.name) else { continue }
            let (target, view) = renderTarget(for: current.name, in: set)
            guard current !== had.version || target != had.target else { continue }
            loop.subscriptions.update(self, at: index, current, target)
            noteExposures(view, screen: current.name, version: current.version)
            if let frame = Fanout.update(from: had.version, oldTarget: had.target, to: current, newTarget: target) {
                queueShared(frame)
            }
        }
    }

    /// Queues a frame shared with other connections (by reference, no copy).
    func queueShared(_ frame: [UInt8]) {
        guard closeHandshakeIsOpen else { return }
        outbound.appendShared(frame)
        loop.flushSoon(self)
        if outbound.pendingBytes > loop.config.outboundHardLimit {
            loop.metrics.slowConsumerCloses.add(1, ordering: .relaxed)
            requestClose()
        }
    }

    /// "s-" and 13 base-62 characters (77 random bits): 15 bytes, which Swift stores inline.
    static func newSessionID() -> String {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        var rng = SystemRandomNumberGenerator()
        var id: [UInt8] = Array("s-".utf8)
        for _ in 0..<13 { id.append(alphabet[Int.random(in: 0..<62, using: &rng)]) }
        return String(decoding: id, as: UTF8.self)
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
