/// The frames computed so far in one fan-out, reused for the next subscriber that starts from the
/// same version and rendition and goes to the same rendition (DESIGN §4: encode once). Subscribers
/// of different builds interleave (DESIGN §16), so it keeps the last `capacity` frames, not only
/// the last: a fan-out to a mix of builds costs a few comparisons per subscriber, not a render.
///
/// Invariant: each remembered frame is what `RenditionCache.update` answers for its key (the
/// cache is deterministic), so a hit sends the same bytes a recompute would.
struct FanoutMemo {
    private struct Remembered {
        let from: ScreenVersion
        let fromTarget: RenderTarget
        let target: RenderTarget
        let frame: [UInt8]?
    }

    /// Enough for the builds of a realistic mix times a few starting versions; past it the oldest
    /// is forgotten (and recomputed, from the cache, if it comes back).
    static let capacity = 16
    private var remembered: [Remembered] = []
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
        // Newest first: consecutive subscribers of one build hit at the first comparison.
        for entry in remembered.reversed()
        where entry.from === old && entry.fromTarget == oldTarget && entry.target == target {
            return entry.frame
        }
        let frame = cache.update(from: old, oldTarget: oldTarget, to: new, newTarget: target)
        if remembered.count == Self.capacity { remembered.removeFirst() }
        remembered.append(Remembered(from: old, fromTarget: oldTarget, target: target, frame: frame))
        targets.insert(target)
        return frame
    }
}
