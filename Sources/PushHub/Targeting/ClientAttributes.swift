/// What targeting knows about one connected client (DESIGN §5): identity and app.
///
/// Invariant: `user` is the verified JWT `sub`, nil for anonymous clients (whose unit is `device`).
public struct ClientAttributes: Sendable {
    public var session: String
    public var user: String?
    public var device: String
    public var platform: String?
    public var appVersion: SemanticVersion?
    public var appVersionText: String?
    /// Cohorts named by the token's `cohorts` claim.
    public var claimCohorts: [String]
    public var claims: JSONObject
    /// Milliseconds since the Unix epoch.
    public var connectedAt: Int

    public var json: JSONValue {
        .object([
            "session": .string(session), "user": user.map(JSONValue.string) ?? .null, "device": .string(device),
            "platform": platform.map(JSONValue.string) ?? .null,
            "app_version": appVersionText.map(JSONValue.string) ?? .null,
            "claim_cohorts": .array(claimCohorts.map(JSONValue.string)), "connected_at": .number(Double(connectedAt)),
        ])
    }
}
