/// Who a client is (DESIGN §3): the subject and claims of a verified token, or, where the hub
/// allows anonymous clients, no user and its `device` as the unit. One rule for a session's
/// hello and for an HTTP fetch of a screen.
struct ClientIdentity {
    var user: String?
    var claimCohorts: [String]
    var claims: JSONObject

    /// Why a client cannot be identified; `message` is what it is told.
    enum Refusal: Error, Equatable {
        case unauthorized(String)
        case missingDevice
        /// The token names a kid no key has, and the hub fetches a JWKS: the answer may wait for
        /// the next fetch (DESIGN §18). Thrown only to a caller that can wait (`mayWaitForKey`).
        case awaitingKey(kid: String)

        var message: String {
            switch self {
            case .unauthorized(let why): why
            case .missingDevice: "an anonymous client needs \"device\" (the unit id)"
            case .awaitingKey(let kid): JWTError.unknownKey(kid: kid).description
            }
        }
    }

    /// - Parameter mayWaitForKey: the caller can hold the client until the JWKS was fetched
    ///   again (a session's hello can, an HTTP fetch does not).
    static func resolve(
        token: String?, device: String, settings: Session.Settings, nowSeconds: Int, mayWaitForKey: Bool = false
    ) throws(Refusal) -> ClientIdentity {
        if let token {
            do {
                let verified = try settings.tokens.verify(token, now: nowSeconds)
                return ClientIdentity(user: verified.subject, claimCohorts: verified.cohorts, claims: verified.all)
            } catch .unknownKey(let kid) where mayWaitForKey && settings.tokens.keys.fetchesKeys {
                throw .awaitingKey(kid: kid)
            } catch {
                settings.tokens.keys.metrics.countRefusal(error)
                throw .unauthorized(error.description)
            }
        }
        guard settings.allowAnonymous else {
            throw .unauthorized("this hub requires a token (hello.token, Authorization: Bearer, or ?token=)")
        }
        guard !device.isEmpty else { throw .missingDevice }
        return ClientIdentity(user: nil, claimCohorts: [], claims: [:])
    }
}
