/// What an admin token may do (DESIGN §14). Every scope may read; `admin` may do everything,
/// including managing tokens. The scope each route needs is in its declaration
/// (`AdminRouteTable`): reads need `read`; a change the scope of what it changes — screens
/// `publish`, syncs and cohorts `sync`, experiments `experiment`, tokens `admin`.
public enum AdminScope: String, Sendable, CaseIterable, Comparable {
    case admin, publish, sync, experiment, read

    public static func < (a: AdminScope, b: AdminScope) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
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
