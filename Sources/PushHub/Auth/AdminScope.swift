/// What an admin token may do (DESIGN §14). Every scope may read; `admin` may do everything,
/// including managing tokens.
public enum AdminScope: String, Sendable, CaseIterable, Comparable {
    case admin, publish, sync, experiment, read

    public static func < (a: AdminScope, b: AdminScope) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// The scope a request needs: reads need `read`; a change needs the scope of what it
    /// changes — screens `publish`, syncs and cohorts `sync`, experiments `experiment`, tokens
    /// `admin`.
    public static func required(method: String, path: Substring) -> AdminScope {
        if path.hasPrefix("/v1/tokens") { return .admin }
        if method == "GET" || method == "HEAD" { return .read }
        if path.hasPrefix("/v1/screens") { return .publish }
        if path.hasPrefix("/v1/syncs") || path.hasPrefix("/v1/cohorts") { return .sync }
        if path.hasPrefix("/v1/experiments") {
            // A lookup by POST would still be a read; today every experiment POST changes one.
            return .experiment
        }
        return .admin
    }
}

/// A named admin token: its scopes and the SHA-256 of its secret (the secret itself is shown
/// once, when it is created, and never stored).
///
/// Invariant: `name` is unique among a hub's tokens; `scopes` is not empty.
public struct AdminToken: Sendable, Equatable {
    public var name: String
    public var scopes: Set<AdminScope>
    /// Lowercase hex SHA-256 of the secret.
    public var digest: String
    public var createdAt: Int

    /// The root token (`admin.token` in the data dir).
    static func root() -> AdminToken { AdminToken(name: "root", scopes: [.admin], digest: "", createdAt: 0) }

    public func allows(_ scope: AdminScope) -> Bool {
        scopes.contains(.admin) || scopes.contains(scope) || scope == .read
    }

    static func digest(of secret: String) -> String {
        Digest.sha256(Array(secret.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
