/// The provider authentication token APNs wants in `authorization: bearer …` (token-based
/// auth, DESIGN §17): an ES256 JWT with header `{"alg":"ES256","kid":<key id>}` and claims
/// `{"iss":<team id>,"iat":<seconds>}`, signed with the team's `.p8` key.
///
/// APNs refuses a token older than an hour (`ExpiredProviderToken`) and one renewed more often
/// than every 20 minutes (`TooManyProviderTokenUpdates`), so a token is kept for
/// `renewAfterSeconds` (40 min) and renewed early only when APNs says the one in use expired.
/// Pure given `nowSeconds`: it reads no clock.
///
/// Invariant: `token(nowSeconds:)` returns the cached token while it was issued at most
/// `renewAfterSeconds` ago and not in the future, and APNs did not reject it; otherwise a new one.
public struct APNsProviderToken: Sendable {
    /// Renew after 40 minutes: inside APNs' window of 20–60 minutes (DESIGN §17: every 30–50 min).
    public static let renewAfterSeconds = 40 * 60

    public let keyID: String
    public let teamID: String
    private let signer: JWSSigner
    /// The token in use and when it was issued (its `iat`).
    public private(set) var current: (token: String, issuedAt: Int)?

    /// - Parameters:
    ///   - key: the `.p8` key (EC P-256).
    ///   - keyID: its 10-character key id (`kid`); `teamID`: the Apple developer team (`iss`).
    /// - Throws: `.wrongKeyKind` when the key is not EC P-256.
    public init(key: PEMPrivateKey, keyID: String, teamID: String) throws(PushCredentialError) {
        signer = try JWSSigner(key: key, algorithm: .es256)
        self.keyID = keyID
        self.teamID = teamID
    }

    /// The token to send at `nowSeconds` (seconds since the Unix epoch), made anew when needed.
    public mutating func token(nowSeconds: Int) throws(PushCredentialError) -> String {
        if let current, current.issuedAt <= nowSeconds, nowSeconds - current.issuedAt < Self.renewAfterSeconds {
            return current.token
        }
        let token = try signer.sign(
            header: ["kid": .string(keyID)],
            claims: ["iss": .string(teamID), "iat": .number(Double(nowSeconds))])
        current = (token, nowSeconds)
        return token
    }

    /// APNs answered `ExpiredProviderToken` to a request that carried `token`: the next
    /// `token(nowSeconds:)` makes a new one. Many pushes in flight with the same token may be
    /// refused together; only the first renews (a token other than the current one is ignored),
    /// so the renewals stay as rare as APNs requires.
    public mutating func expired(_ token: String) {
        if current?.token == token { current = nil }
    }
}
