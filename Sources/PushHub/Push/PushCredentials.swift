import HTTP2

/// What a provider's requests are signed with, now (DESIGN §17).
enum PushAuthorization: Equatable {
    /// The credential (an APNs provider token, an FCM access token); the request puts it in its
    /// `authorization` header.
    case ready(String)
    /// Being fetched (an FCM access token): pushes wait.
    case pending
    /// The provider refused the credentials, or they cannot be used: the provider stops.
    case refused(String)
}

/// A provider's credentials and request shape: APNs signs its own provider tokens; FCM trades an
/// assertion for an access token first. Called on the control plane's thread only.
protocol PushCredentials: AnyObject {
    var provider: PushProvider { get }
    /// The authorization to send with a push at `nowMilliseconds` (may start fetching one).
    func authorization(nowMilliseconds: Int, now: UInt64) -> PushAuthorization
    /// When asking `authorization` again may get further after it answered `pending` (nil: not
    /// before something else happens, e.g. the answer to the fetch under way).
    var nextAttempt: UInt64? { get }
    /// The provider said `credential` expired: the next one is new.
    func renew(after credential: String)
    /// The request that pushes `job` with `credential`.
    func request(for job: PushJob, credential: String, nowMilliseconds: Int) throws(PushRequestError) -> HTTP2Request
}

extension PushJob {
    /// What the payload carries (DESIGN §17): the sync as the socket sends it, for dedupe by id.
    var message: PushMessage {
        PushMessage(
            syncID: sync.id, seq: sync.seq, reason: sync.reason, scope: sync.scope, hint: sync.hint,
            mandatory: sync.mandatory, collapse: sync.collapse, expiresAtMilliseconds: sync.expiresAt)
    }

    var target: PushTarget { PushTarget(provider: provider, token: token, topic: topic) }
}

/// APNs token-based auth: an ES256 provider token, renewed every 40 minutes or when APNs says
/// it expired.
final class APNsCredentials: PushCredentials {
    var provider: PushProvider { .apns }
    private var token: APNsProviderToken
    private let authority: String

    init(key path: String, keyID: String, team: String, endpoint: PushEndpoint) throws(PushCredentialError) {
        let key = try PEMPrivateKey(pem: try PEMPrivateKey.readCredentialFile(path), source: path)
        token = try APNsProviderToken(key: key, keyID: keyID, teamID: team)
        authority = endpoint.authority
    }

    func authorization(nowMilliseconds: Int, now: UInt64) -> PushAuthorization {
        do {
            return .ready(try token.token(nowSeconds: nowMilliseconds / 1000))
        } catch {
            return .refused("the APNs provider token cannot be signed: \(error)")
        }
    }

    /// Signing is local: there is nothing to wait for.
    var nextAttempt: UInt64? { nil }

    func renew(after credential: String) { token.expired(credential) }

    func request(for job: PushJob, credential: String, nowMilliseconds: Int) throws(PushRequestError)
        -> HTTP2Request
    {
        try APNsRequest.make(message: job.message, target: job.target, authority: authority, providerToken: credential)
    }
}

/// FCM HTTP v1 with a service account: an RS256 assertion posted to its `token_uri` for an OAuth
/// access token, cached until a minute before it expires.
///
/// Invariant: at most one token request is outstanding (`fetching`).
final class FCMCredentials: PushCredentials {
    var provider: PushProvider { .fcm }
    let account: FCMServiceAccount
    private let authority: String
    /// Where token requests go (the FCM link itself when `token_uri` is on the same host).
    private let tokenTransport: PushTransport
    private var token: FCMAccessToken?
    private var fetching = false
    /// After a failed fetch: not before then (monotonic ns), and the failures in a row.
    private var retryAt: UInt64 = 0
    private var failures = 0
    private var refusal: String?
    private let backoff = Backoff(initial: .milliseconds(500), cap: .seconds(60))

    init(account: FCMServiceAccount, endpoint: PushEndpoint, tokenTransport: PushTransport) {
        self.account = account
        authority = endpoint.authority
        self.tokenTransport = tokenTransport
    }

    func authorization(nowMilliseconds: Int, now: UInt64) -> PushAuthorization {
        if let refusal { return .refused(refusal) }
        if let token, token.isUsable(nowSeconds: nowMilliseconds / 1000) { return .ready(token.value) }
        if !fetching && now >= retryAt { fetch(nowSeconds: nowMilliseconds / 1000, now: now) }
        return refusal.map(PushAuthorization.refused) ?? .pending
    }

    /// After a failed fetch, when to fetch again; nil while one is under way or none failed.
    var nextAttempt: UInt64? { fetching || failures == 0 ? nil : retryAt }

    func renew(after credential: String) {
        if token?.value == credential { token = nil }
    }

    func request(for job: PushJob, credential: String, nowMilliseconds: Int) throws(PushRequestError)
        -> HTTP2Request
    {
        try FCMRequest.make(
            message: job.message, target: job.target, projectID: account.projectID, authority: authority,
            accessToken: credential, nowMilliseconds: nowMilliseconds)
    }

    private func fetch(nowSeconds: Int, now: UInt64) {
        let request: HTTP2Request
        do {
            request = try account.tokenRequest(nowSeconds: nowSeconds)
        } catch {
            refusal = "the FCM assertion cannot be signed: \(error)"
            return
        }
        fetching = true
        tokenTransport.send(request, now: now) { [self] outcome in
            fetching = false
            let now = MonotonicClock.now()
            switch outcome {
            case .response(let response):
                do throws(PushCredentialError) {
                    token = try FCMAccessToken(
                        status: response.status, body: response.body, nowSeconds: WallClock.nowMilliseconds() / 1000)
                    failures = 0
                } catch {
                    guard error.isTransient else {
                        refusal = "\(account.tokenURI) refused the service account \(account.clientEmail): \(error)"
                        return
                    }
                    failed(error.description, now: now)
                }
            case .failed(let reason, _):
                failed(reason, now: now)
            }
        }
    }

    private func failed(_ reason: String, now: UInt64) {
        failures += 1
        let delay = backoff.delay(attempt: failures, random: .random(in: 0.5..<1))
        retryAt = now + delay.nanoseconds
        Log.warning(
            "cannot get an FCM access token; trying again",
            [("reason", reason), ("retry_in", DurationText.describe(delay))])
    }
}
