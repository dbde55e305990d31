/// What `pushhub --version` and `hubctl --version` print: the release and the commit built
/// (`buildCommit` comes from BuildInfoPlugin, which reads the checkout before each build).
public enum BuildInfo {
    public static let version = "0.9.0"
    public static let commit = buildCommit
    public static let hasUncommittedChanges = buildHasUncommittedChanges

    /// `0.9.0 (commit 1a2b3c4d5e6f)`, plus a note when tracked files differed from the commit.
    public static var description: String {
        "\(version) (commit \(commit.prefix(12))\(hasUncommittedChanges ? ", with uncommitted changes" : ""))"
    }
}
