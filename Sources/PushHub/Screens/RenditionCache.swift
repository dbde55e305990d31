/// What one thread derived from screen versions (DESIGN §4: render, diff and encode once per
/// rendition): merged variant trees, rendered renditions, and the encoded messages that lead to
/// each version. Every loop and the control plane own one; nothing in it is shared or locked.
///
/// The control plane renders and encodes a published version for every render target some loop
/// uses (`prepare`) and sends the result along with the version; loops `seed` their cache with
/// it, so the common fan-out finds its frame ready and a rendition is rendered once per hub.
/// Only what a loop needs beyond that (an old starting version, a new target) is computed there.
///
/// Invariants: an entry only holds values that are pure functions of its version (and, for
/// patches, of the immutable version they start from), so a cache hit equals a recompute; an
/// entry keeps its version alive, so its `ObjectIdentifier` is never reused while it is here.
public struct RenditionCache {
    /// Everything derived from one version.
    public struct Entry: Sendable {
        let version: ScreenVersion
        fileprivate var merged: [[String]: MergedTree] = [:]
        fileprivate var rendered: [RenditionKey: RenderedTree] = [:]
        fileprivate var messages: [MessageKey: [UInt8]] = [:]
        /// Rendition keys of targets without variants that judge components, by their
        /// capabilities (kept alive here, so an identifier is never another object's).
        fileprivate var keys: [ObjectIdentifier: (capabilities: Capabilities, key: RenditionKey)] = [:]
    }

    /// The tree after a combination of variant patches, and what it asks of its clients.
    public struct MergedTree: Sendable {
        var tree: JSONValue
        var requirements: TreeRequirements
    }

    /// The outgoing messages that end at a version, as complete WebSocket frames.
    public enum MessageKey: Hashable, Sendable {
        case snapshot(rendition: RenditionKey)
        /// `statesVariants`: the patch names the app's variants even when they did not change (a
        /// client resuming by `have` may hold older ones).
        case patch(fromVersion: Int, fromRendition: RenditionKey, rendition: RenditionKey, statesVariants: Bool)
    }

    /// Per screen name, per version (by identity): what was derived from it.
    private var entries: [String: [ObjectIdentifier: Entry]] = [:]
    /// One object per distinct capabilities and declaration of this thread's clients (DESIGN §16).
    private var capabilities = Interner<Capabilities>()
    private var declarations = Interner<DeclaredComponents>()
    /// What each build renders under the registry whose `latest` is `resolvedUnder`: a hello,
    /// and every session again after a registry change, resolve a build once per thread.
    private var resolvedUnder: Capabilities?
    private var resolved: [ClientBuild: Capabilities] = [:]
    /// Past this many builds the memo starts over (clients declaring made-up components cannot
    /// grow it without bound).
    static let maxResolvedBuilds = 10_000

    public init() {}

    /// The tree with `target`'s variant patches applied (in order), and its thresholds.
    mutating func mergedTree(_ version: ScreenVersion, for target: RenderTarget) -> MergedTree {
        if target.variantPatches.allSatisfy({ $0.patch == nil }) {
            return MergedTree(tree: version.tree, requirements: version.requirements)
        }
        let labels = target.variantPatches.map(\.label)
        let id = ObjectIdentifier(version)
        if let cached = entries[version.name]?[id]?.merged[labels] { return cached }
        let tree = target.variantPatches.reduce(version.tree) { tree, variant in variant.apply(to: tree) }
        let merged = MergedTree(tree: tree, requirements: TreeRequirements(tree))
        entries[version.name, default: [:]][id, default: Entry(version: version)].merged[labels] = merged
        return merged
    }

    /// The rendition key of `target` for `version`: clients with equal keys see equal trees.
    /// Judging components costs a lookup per need, so for a target without variants that judges
    /// some, the key is kept per capabilities object (a fan-out to many builds asks often).
    mutating func renditionKey(_ version: ScreenVersion, for target: RenderTarget) -> RenditionKey {
        let capabilities = target.capabilities
        let kept = target.variantPatches.isEmpty && !capabilities.limits.isEmpty
        let id = ObjectIdentifier(version), by = ObjectIdentifier(capabilities)
        if kept, let known = entries[version.name]?[id]?.keys[by], known.capabilities === capabilities {
            return known.key
        }
        let requirements = mergedTree(version, for: target).requirements
        let key = RenditionKey(
            patches: target.variantPatches.map(\.label),
            capabilities: Rendition.key(for: capabilities, thresholds: requirements.thresholds),
            components: Self.judgements(of: requirements.components, by: capabilities))
        if kept {
            entries[version.name, default: [:]][id, default: Entry(version: version)].keys[by] = (capabilities, key)
        }
        return key
    }

    /// How `capabilities` fares with each need; none when it renders every one as it is (so that
    /// the clients of a hub without registered components share renditions whatever they render).
    private static func judgements(of needs: [ComponentNeed], by capabilities: Capabilities) -> [ComponentJudgement] {
        guard !capabilities.limits.isEmpty else { return [] }
        let judged = needs.map(capabilities.judge)
        return judged.allSatisfy { $0 == .passes } ? [] : judged
    }

    /// The tree `target` sees of `version`, rendered once.
    public mutating func rendered(_ version: ScreenVersion, for target: RenderTarget) -> RenderedTree {
        let key = renditionKey(version, for: target)
        let id = ObjectIdentifier(version)
        if let cached = entries[version.name]?[id]?.rendered[key] { return cached }
        let base = mergedTree(version, for: target)
        let rendered = RenderedTree(
            base.requirements.leavesUnchanged(for: target.capabilities)
                ? base.tree : Rendition.render(base.tree, for: target))
        Metrics.renders.add(1, ordering: .relaxed)
        entries[version.name, default: [:]][id, default: Entry(version: version)].rendered[key] = rendered
        return rendered
    }

    /// A message frame ending at `version`, made by `make` the first time.
    private mutating func message(_ version: ScreenVersion, _ key: MessageKey, make: () -> [UInt8])
        -> [UInt8]
    {
        let id = ObjectIdentifier(version)
        if let cached = entries[version.name]?[id]?.messages[key] { return cached }
        let made = make()
        Metrics.encodes.add(1, ordering: .relaxed)
        entries[version.name, default: [:]][id, default: Entry(version: version)].messages[key] = made
        return made
    }

    // MARK: - What clients render (DESIGN §16)

    /// What `client` renders under `view`'s registry, shared with this thread's equal clients.
    mutating func capabilities(of client: ClientAttributes, view: HubView) -> Capabilities {
        let registry = view.components
        // Every registry change makes a new `latest`: the memo is of this registry exactly.
        if resolvedUnder !== registry.latest {
            resolvedUnder = registry.latest
            resolved.removeAll()
        }
        let build = ClientBuild(client)
        if let known = resolved[build] { return known }
        let made = capabilities.intern(registry.capabilities(of: client))
        if resolved.count >= Self.maxResolvedBuilds { resolved.removeAll() }
        resolved[build] = made
        return made
    }

    /// `declared`, or the equal declaration another client here made.
    mutating func intern(_ declared: DeclaredComponents) -> DeclaredComponents { declarations.intern(declared) }

    // MARK: - What a client is sent (DESIGN §4)

    /// The frame bringing a client from `old` as `oldTarget` saw it (nil: it has nothing) to
    /// `new` as `target` sees it: a `patch` when that is smaller, else a `snapshot`. A patch names
    /// the app's variants when they changed, or always when `statingVariants`; a change of
    /// variants alone is a patch without ops.
    /// - Returns: nil when the client's rendered tree is unchanged (and its variants, unless
    ///   `statingVariants`: the caller then says `unchanged` with them).
    public mutating func update(
        from old: ScreenVersion?, oldTarget: RenderTarget, to new: ScreenVersion, newTarget target: RenderTarget,
        statingVariants: Bool = false
    ) -> [UInt8]? {
        guard let old else { return snapshot(new, for: target) }
        let rendered = rendered(new, for: target)
        let before = self.rendered(old, for: oldTarget)
        let variantsChanged = !oldTarget.hasSameVariants(as: target)
        if before.hash == rendered.hash && (statingVariants || !variantsChanged) { return nil }
        let key = MessageKey.patch(
            fromVersion: old.version, fromRendition: renditionKey(old, for: oldTarget),
            rendition: renditionKey(new, for: target), statesVariants: statingVariants)
        return message(new, key) {
            let variants = target.variants
            let ops = JSONPatchDiff.diff(before.tree, rendered.tree)
            let patch = ServerMessage.patch(
                screen: new.name, from: old.version, version: new.version, hash: rendered.hash, ops: ops,
                variants: statingVariants || variantsChanged ? variants : nil)
            let snapshotSize = ServerMessage.snapshotSize(
                screen: new.name, version: new.version, rendered: rendered, variants: variants)
            guard patch.count < snapshotSize else {
                Metrics.snapshotsEncoded.add(1, ordering: .relaxed)
                return ServerMessage.snapshot(
                    screen: new.name, version: new.version, rendered: rendered, variants: variants)
            }
            Metrics.patchesEncoded.add(1, ordering: .relaxed)
            return patch
        }
    }

    /// The same for a client whose rendition did not change.
    public mutating func update(
        from old: ScreenVersion?, to new: ScreenVersion, for target: RenderTarget, statingVariants: Bool = false
    ) -> [UInt8]? {
        update(from: old, oldTarget: target, to: new, newTarget: target, statingVariants: statingVariants)
    }

    /// The `snapshot` of `version` as `target` sees it.
    public mutating func snapshot(_ version: ScreenVersion, for target: RenderTarget) -> [UInt8] {
        let rendered = rendered(version, for: target)
        return message(version, .snapshot(rendition: renditionKey(version, for: target))) {
            Metrics.snapshotsEncoded.add(1, ordering: .relaxed)
            return ServerMessage.snapshot(
                screen: version.name, version: version.version, rendered: rendered, variants: target.variants)
        }
    }

    /// Who a change from `old` to `new` reaches among subscribers rendered as `targets` (with
    /// their counts): those whose rendered tree changes, and the distinct renditions of `new`.
    mutating func reach(from old: ScreenVersion?, to new: ScreenVersion, targets: [RenderTarget: Int]) -> (
        sent: Int, renditions: Int
    ) {
        var sent = 0
        var renditions = Set<RenditionKey>()
        for (target, count) in targets {
            renditions.insert(renditionKey(new, for: target))
            if let old, rendered(old, for: target).hash == rendered(new, for: target).hash { continue }
            sent += count
        }
        return (sent, renditions.count)
    }

    // MARK: - Sharing and forgetting

    /// Renders and encodes `version` for each of `targets`, with the patch from `previous`.
    /// - Returns: what was derived from `version`, to seed the loops' caches with.
    mutating func prepare(_ version: ScreenVersion, from previous: ScreenVersion?, for targets: [RenderTarget])
        -> Entry?
    {
        for target in targets { _ = update(from: previous, to: version, for: target) }
        return entries[version.name]?[ObjectIdentifier(version)]
    }

    /// Takes what another thread derived from a version (values only: safe to share).
    mutating func seed(_ entry: Entry) {
        let id = ObjectIdentifier(entry.version)
        guard let mine = entries[entry.version.name]?[id] else {
            entries[entry.version.name, default: [:]][id] = entry
            return
        }
        var merged = entry
        merged.merged.merge(mine.merged) { theirs, _ in theirs }
        merged.rendered.merge(mine.rendered) { theirs, _ in theirs }
        merged.messages.merge(mine.messages) { theirs, _ in theirs }
        merged.keys.merge(mine.keys) { theirs, _ in theirs }
        entries[entry.version.name, default: [:]][id] = merged
    }

    /// Drops what was derived from versions of `screen` other than `kept` (a version a client
    /// still holds is derived again if it is needed).
    mutating func forget(screen: String, keeping kept: [ScreenVersion]) {
        guard var versions = entries.removeValue(forKey: screen) else { return }
        let keep = Set(kept.map(ObjectIdentifier.init))
        for id in versions.keys where !keep.contains(id) { versions[id] = nil }
        if !versions.isEmpty { entries[screen] = versions }
    }
}
