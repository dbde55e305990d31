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

/// One published version of a screen, immutable, with who published it and why (its history
/// entry). What is derived from it (renditions, encoded messages) lives in each thread's
/// `RenditionCache`.
public final class ScreenVersion: Sendable {
    public let name: String
    public let version: Int
    public let tree: JSONValue
    /// Milliseconds since the Unix epoch.
    public let publishedAt: Int
    /// What the base tree asks of its clients: thresholds and component needs (DESIGN §4, §16).
    public let requirements: TreeRequirements
    /// The name of the admin token that published it (`root` for the root token); nil for a
    /// version stored before versions recorded it.
    public let author: String?
    /// What the publisher said about it (`?message=`, a rollback's `"message"`); nil: nothing.
    public let message: String?
    /// The version whose tree a rollback republished as this one; nil for a plain publish.
    public let rollbackOf: Int?

    public init(
        name: String, version: Int, tree: JSONValue, publishedAt: Int, author: String? = nil, message: String? = nil,
        rollbackOf: Int? = nil
    ) {
        self.name = name
        self.version = version
        self.tree = tree
        self.publishedAt = publishedAt
        self.author = author
        self.message = message
        self.rollbackOf = rollbackOf
        requirements = TreeRequirements(tree)
    }
}
