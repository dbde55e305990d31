/// The frames computed so far in one fan-out, reused for every later subscriber that starts from
/// the same version and rendition and goes to the same rendition (DESIGN §4: encode once).
/// Subscribers of many builds interleave (DESIGN §16), so it is a dictionary for the fan-out's
/// length: a subscriber costs one hash of its targets (their capabilities' hashes are computed
/// once, when they are made) and one lookup, however many builds there are.
///
/// Invariant: each remembered frame is what `RenditionCache.update` answers for its key (the
/// cache is deterministic), so a hit sends the same bytes a recompute would.
struct FanoutMemo {
    /// Where a subscriber starts and what it goes to.
    private struct Step: Hashable {
        let from: ScreenVersion
        let fromTarget: RenderTarget
        let target: RenderTarget

        static func == (a: Step, b: Step) -> Bool {
            a.from === b.from && a.fromTarget == b.fromTarget && a.target == b.target
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(ObjectIdentifier(from))
            hasher.combine(fromTarget)
            hasher.combine(target)
        }
    }

    /// nil frames too: a step that sends nothing is settled as well.
    private var frames: [Step: [UInt8]?] = [:]
    /// The previous subscriber's step: most neighbours share it, and comparing is cheaper than hashing.
    private var last: (step: Step, frame: [UInt8]?)?
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
        let step = Step(from: old, fromTarget: oldTarget, target: target)
        if let last, last.step == step { return last.frame }
        let frame: [UInt8]?
        if let known = frames[step] {
            frame = known
        } else {
            frame = cache.update(from: old, oldTarget: oldTarget, to: new, newTarget: target)
            frames[step] = .some(frame)
            targets.insert(target)
        }
        last = (step, frame)
        return frame
    }
}
