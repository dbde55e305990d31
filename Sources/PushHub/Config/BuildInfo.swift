/// What `pushhub --version` and `hubctl --version` print: the version and the commit built
/// (`buildVersion` and `buildCommit` come from BuildInfoPlugin, which runs `scripts/version.sh`
/// and reads the checkout before each build). The version is the same string the distribution's
/// artifacts carry in their names: `X.Y.Z` on a commit tagged `vX.Y.Z`, else `VERSION-dev.N.gSHA`.
public enum BuildInfo {
    public static let version = buildVersion
    public static let commit = buildCommit
    public static let hasUncommittedChanges = buildHasUncommittedChanges

    /// `0.9.0 (commit 1a2b3c4d5e6f)`, plus a note when tracked files differed from the commit.
    public static var description: String {
        "\(version) (commit \(commit.prefix(12))\(hasUncommittedChanges ? ", with uncommitted changes" : ""))"
    }
}
