/// Subscribing (DESIGN §3 `subscribe`): what the client is sent for a screen — a snapshot, a
/// patch from the version it has, `unchanged`, or `pending` until the first version.
extension Session {
    /// Subscribes (or re-subscribes) `ready` to `screen`, from what the client says it `have`s.
    func subscribe(
        _ ready: ReadySession, _ screen: String, have: ClientMessage.Have?, view: HubView, nowMilliseconds: Int,
        cache: inout RenditionCache, out: inout [Action]
    ) {
        if let problem = ScreenName.validationError(screen) {
            out.append(error("invalid_screen_name", problem, ref: "subscribe"))
            return
        }
        guard let offered = view.current(screen, for: ready.attributes, holding: have?.version) else {
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
        // A release's candidate this client sees exactly as the base is not served (nor counted
        // as exposed), as when a release reaches a client already subscribed (`bringUpToDate`).
        var current = offered
        if offered.version != have?.version, let base = view.current(screen), base !== offered,
            cache.rendered(offered, for: target).hash == cache.rendered(base, for: target).hash
        {
            current = base
        }
        let rendered = cache.rendered(current, for: target)
        if let hash = have?.hash, hash == rendered.hash {
            out.append(
                .send(ServerMessage.unchanged(screen: screen, version: current.version, hash: hash, variants: target.variants)))
        } else if let version = have?.version, let old = view.version(screen, version),
            have?.hash == nil || cache.rendered(old, for: target).hash == have?.hash
        {
            out.append(
                .send(
                    cache.update(from: old, to: current, for: target, statingVariants: true)
                        ?? ServerMessage.unchanged(
                            screen: screen, version: current.version, hash: rendered.hash, variants: target.variants)))
        } else {
            out.append(.send(cache.snapshot(current, for: target)))
        }
        noteExposures(
            ready, variants, screen: screen, version: current.version, nowMilliseconds: nowMilliseconds,
            out: &out)
        noteReleaseServed(ready, screen, current, view: view, nowMilliseconds: nowMilliseconds, out: &out)
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
}
