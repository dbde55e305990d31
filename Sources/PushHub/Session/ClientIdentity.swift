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

        var message: String {
            switch self {
            case .unauthorized(let why): why
            case .missingDevice: "an anonymous client needs \"device\" (the unit id)"
            }
        }
    }

    static func resolve(token: String?, device: String, settings: Session.Settings, nowSeconds: Int)
        throws(Refusal) -> ClientIdentity
    {
        if let token {
            do {
                let verified = try settings.tokens.verify(token, now: nowSeconds)
                return ClientIdentity(user: verified.subject, claimCohorts: verified.cohorts, claims: verified.all)
            } catch {
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
