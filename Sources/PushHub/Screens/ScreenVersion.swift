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

/// One published version of a screen, immutable. What is derived from it (renditions, encoded
/// messages) lives in each thread's `RenditionCache`.
public final class ScreenVersion: Sendable {
    public let name: String
    public let version: Int
    public let tree: JSONValue
    /// Milliseconds since the Unix epoch.
    public let publishedAt: Int
    /// The capability thresholds of the base tree (DESIGN §4).
    public let thresholds: [SemanticVersion]

    public init(name: String, version: Int, tree: JSONValue, publishedAt: Int) {
        self.name = name
        self.version = version
        self.tree = tree
        self.publishedAt = publishedAt
        thresholds = Rendition.thresholds(in: tree)
    }
}
