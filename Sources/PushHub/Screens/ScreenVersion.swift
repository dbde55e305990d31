import Synchronization

/// A tree rendered for one rendition: its canonical bytes and hash, computed once.
///
/// Invariant: `hash == ScreenHash.of(canonical: canonical)` and `canonical` is `tree` in RFC 8785 form.
public final class RenderedTree: Sendable {
    public let tree: JSONValue
    public let canonical: [UInt8]
    public let hash: String

    public init(_ tree: JSONValue) {
        self.tree = tree
        canonical = JSONWriter.write(tree)
        hash = ScreenHash.of(canonical: canonical)
    }
}

/// One published version of a screen, immutable, with caches of what was derived from it:
/// its renditions and the encoded messages that lead to them (DESIGN §4: render, diff and
/// encode once per rendition).
///
/// Invariant: the caches only ever hold values that are pure functions of this version (and,
/// for patches, of the immutable version they start from), so a cache hit equals a recompute.
public final class ScreenVersion: Sendable {
    public let name: String
    public let version: Int
    public let tree: JSONValue
    /// Milliseconds since the Unix epoch.
    public let publishedAt: Int
    public let thresholds: [SemanticVersion]

    private let renditions = Mutex<[RenditionKey: RenderedTree]>([:])  // guarded by itself
    /// The tree after each combination of variant patches, and its capability thresholds.
    private let merged = Mutex<[[String]: MergedTree]>([:])  // guarded by itself

    struct MergedTree: Sendable {
        var tree: JSONValue
        var thresholds: [SemanticVersion]
    }
    private let messages = Mutex<[MessageKey: [UInt8]]>([:])  // guarded by itself

    /// The outgoing messages that end at this version, as complete WebSocket frames.
    enum MessageKey: Hashable {
        case snapshot(rendition: RenditionKey)
        case patch(fromVersion: Int, fromRendition: RenditionKey, rendition: RenditionKey)
    }

    public init(name: String, version: Int, tree: JSONValue, publishedAt: Int) {
        self.name = name
        self.version = version
        self.tree = tree
        self.publishedAt = publishedAt
        thresholds = Rendition.thresholds(in: tree)
    }

    /// The tree with `target`'s variant patches applied (RFC 7386, in order), and its thresholds.
    func mergedTree(for target: RenderTarget) -> MergedTree {
        if target.variantPatches.isEmpty { return MergedTree(tree: tree, thresholds: thresholds) }
        let labels = target.variantPatches.map(\.label)
        if let cached = merged.withLock({ $0[labels] }) { return cached }
        let tree = target.variantPatches.reduce(self.tree) { MergePatch.apply($1.patch, to: $0) }
        let result = MergedTree(tree: tree, thresholds: Rendition.thresholds(in: tree))
        merged.withLock { $0[labels] = result }
        return result
    }

    /// The rendition key of `target` for this version.
    public func renditionKey(for target: RenderTarget) -> RenditionKey {
        RenditionKey(
            patches: target.variantPatches.map(\.label),
            capabilities: Rendition.key(for: target, thresholds: mergedTree(for: target).thresholds))
    }

    /// The tree `target` sees, rendered once per rendition: under the lock, so that two loops
    /// needing the same rendition at once do not both render it.
    public func rendered(for target: RenderTarget) -> RenderedTree {
        let key = renditionKey(for: target)
        return renditions.withLock { cache in
            if let cached = cache[key] { return cached }
            let base = mergedTree(for: target)
            // Without capability nodes every client sees the merged tree as it is.
            let rendered = RenderedTree(base.thresholds.isEmpty ? base.tree : Rendition.render(base.tree, for: target))
            Metrics.renders.add(1, ordering: .relaxed)
            cache[key] = rendered
            return rendered
        }
    }

    /// A cached message frame, or `make()`'s result stored for the next subscriber. `make` runs
    /// under the lock (one encoding even when loops race) and must not ask this version for
    /// another message.
    func message(_ key: MessageKey, make: () -> [UInt8]) -> [UInt8] {
        messages.withLock { cache in
            if let cached = cache[key] { return cached }
            let made = make()
            Metrics.encodes.add(1, ordering: .relaxed)
            cache[key] = made
            return made
        }
    }

    /// The base tree's hash as an up-to-date client sees it (what the admin API reports).
    public var latestHash: String { rendered(for: .latest).hash }
}
