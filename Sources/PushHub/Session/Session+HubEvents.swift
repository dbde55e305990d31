/// The hub's side of a session: published versions, experiment changes, deletions and syncs
/// reach every session they concern, and a congested connection catches up once it drains
/// (DESIGN §9).
extension Session {
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
        noteExposures(
            ready, variants, screen: version.name, version: version.version,
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

    /// Experiments touching `screen` changed, or its release did (started, rose, ended): send a
    /// patch if what this client sees changed.
    mutating func screenMayHaveChanged(
        screen: String, view: HubView, isCongested: Bool, nowMilliseconds: Int, cache: inout RenditionCache,
        out: inout [Action]
    ) {
        guard case .ready(let ready) = state, let index = ready.index(of: screen),
            let current = versionToSee(ready, at: index, view: view)
        else { return }
        if isCongested {
            ready.needsCatchUp = true
            out.append(.coalesced)
            return
        }
        bringUpToDate(ready, at: index, current, view: view, nowMilliseconds: nowMilliseconds, cache: &cache, out: &out)
    }

    /// The registry or the app profiles changed (DESIGN §16): if what this client renders changed,
    /// each subscription is brought to its new rendition (a patch within the same version).
    mutating func capabilitiesMayHaveChanged(
        view: HubView, isCongested: Bool, nowMilliseconds: Int, cache: inout RenditionCache, out: inout [Action]
    ) {
        guard case .ready(let ready) = state else { return }
        let capabilities = cache.capabilities(of: ready.attributes, view: view)
        guard capabilities != ready.capabilities else { return }
        ready.capabilities = capabilities
        if isCongested {
            // The catch-up brings every subscription to the new capabilities' renditions.
            ready.needsCatchUp = true
            out.append(.coalesced)
            return
        }
        for index in ready.subscriptions.indices {
            guard let current = versionToSee(ready, at: index, view: view) else { continue }
            bringUpToDate(
                ready, at: index, current, view: view, nowMilliseconds: nowMilliseconds, cache: &cache, out: &out)
        }
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
            guard let current = versionToSee(ready, at: index, view: view) else { continue }
            bringUpToDate(
                ready, at: index, current, view: view, nowMilliseconds: nowMilliseconds, cache: &cache, out: &out)
        }
    }
}
