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
