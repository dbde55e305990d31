/// What targeting knows about one connected client (DESIGN §5): identity and app. Kept inline
/// in the client's session (no object of its own); copied only to answer `GET /v1/clients`.
///
/// Invariants: `user` is the verified JWT `sub`, nil for anonymous clients (whose unit is
/// `device`).
public struct ClientAttributes: Sendable {
    public let session: String
    public let user: String?
    public let device: String
    public let platform: String?
    public let appVersion: SemanticVersion?
    /// Cohorts named by the token's `cohorts` claim.
    public let claimCohorts: [String]
    public let claims: JSONObject
    /// Milliseconds since the Unix epoch.
    public let connectedAt: Int
    /// The components it declared in its hello (DESIGN §16); nil: it declared none.
    public let components: DeclaredComponents?

    public init(
        session: String, user: String?, device: String, platform: String?, appVersion: SemanticVersion?,
        claimCohorts: [String], claims: JSONObject, connectedAt: Int, components: DeclaredComponents? = nil
    ) {
        self.session = session
        self.user = user
        self.device = device
        self.platform = platform
        self.appVersion = appVersion
        self.claimCohorts = claimCohorts
        self.claims = claims
        self.connectedAt = connectedAt
        self.components = components
    }

    public var json: JSONValue {
        .object([
            "session": .string(session), "user": user.map(JSONValue.string) ?? .null, "device": .string(device),
            "platform": platform.map(JSONValue.string) ?? .null,
            "app_version": appVersion.map { .string($0.description) } ?? .null,
            "claim_cohorts": .array(claimCohorts.map(JSONValue.string)), "connected_at": .number(Double(connectedAt)),
            "components": components?.json ?? .null,
        ])
    }
}
