/// What a session is rendered as (render targets, DESIGN §6 variant assignment) and the
/// exposures that follow from it, shared by subscribing and by the hub's events.
extension Session {
    func bringUpToDate(
        _ ready: ReadySession, at index: Int, _ current: ScreenVersion, view: HubView, nowMilliseconds: Int,
        cache: inout RenditionCache, out: inout [Action]
    ) {
        let had = ready.subscriptions[index]
        let (target, variants) = renderTarget(ready, current.name, view: view, out: &out)
        // Before the early return: a unit that joins a variant whose tree equals what it holds
        // (control, on a traffic ramp) gets no patch, yet is served that variant from now on.
        noteExposures(
            ready, variants, screen: current.name, version: current.version,
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
        noteReleaseServed(ready, current.name, current, view: view, nowMilliseconds: nowMilliseconds, out: &out)
    }

    /// The version the subscription at `index` should be at now: the screen's current one, or the
    /// candidate of its rolling release for a client it exposes or that holds it already.
    func versionToSee(_ ready: ReadySession, at index: Int, view: HubView) -> ScreenVersion? {
        let held = ready.subscriptions[index].version
        return view.current(held.name, for: ready.attributes, holding: held.version)
    }

    /// What this client is rendered as on `screen`, and the variants it is exposed to there.
    /// Assignments are cached per experiment change (DESIGN §6 is pure, so this is a cache).
    func renderTarget(_ ready: ReadySession, _ screen: String, view: HubView, out: inout [Action])
        -> (RenderTarget, VariantView)
    {
        renderTarget(ready, screen, experiments: view.experiments.touching[screen], view: view, out: &out)
    }

    /// The same, given the running experiments that touch `screen` (looked up once per fan-out).
    func renderTarget(
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
    func noteExposures(
        _ ready: ReadySession, _ variants: VariantView, screen: String, version: Int, nowMilliseconds: Int,
        out: inout [Action]
    ) {
        for (experiment, salt, variant) in variants.exposures {
            let key = experiment + "|" + screen
            if let known = ready.memory.exposed[key], known.variant == variant, known.salt == salt { continue }
            ready.memory.exposed[key] = (salt, variant, version, false)
            let exposure = ResultEvent.Exposure(
                experiment: experiment, salt: salt, variant: variant, screen: screen, version: version)
            out.append(
                .result(ResultEvent(.served(exposure), unit: ready.unit, at: nowMilliseconds), sessionWasServed: true))
        }
    }

    /// The client rendered `version` of `screen`: its exposures there are confirmed.
    func confirmExposures(
        _ ready: ReadySession, screen: String, version: Int, nowMilliseconds: Int, out: inout [Action]
    ) {
        for (key, exposed) in ready.memory.exposed
        where !exposed.confirmed && key.hasSuffix("|" + screen) && version >= exposed.version {
            ready.memory.exposed[key]?.confirmed = true
            let exposure = ResultEvent.Exposure(
                experiment: String(key.dropLast(screen.count + 1)), salt: exposed.salt, variant: exposed.variant,
                screen: screen, version: version)
            out.append(
                .result(
                    ResultEvent(.confirmed(exposure), unit: ready.unit, at: nowMilliseconds), sessionWasServed: true))
        }
    }
}
