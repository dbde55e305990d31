import HTTP2

/// What one provider answer means for the push and for the provider (DESIGN §17), from the
/// status, the `retry-after` header and the reason in the body: APNs `{"reason":"…"}`; FCM
/// `{"error":{"status":"…","details":[{"errorCode":"…"}, {"fieldViolations":[{"field":…}]}]}}`.
///
/// | Verdict | APNs | FCM |
/// | --- | --- | --- |
/// | `delivered` | 200 | 200 |
/// | `tokenInvalid` (forget the device's token) | 410; 400 `BadDeviceToken`, `DeviceTokenNotForTopic` | 404 or 400 with `UNREGISTERED`; 400 `INVALID_ARGUMENT` naming `message.token`; 403 `SENDER_ID_MISMATCH` (the token belongs to another Firebase project: no credentials of ours will reach it) |
/// | `retry` (later, after `retry-after` if given) | 429, 5xx | 429, 5xx |
/// | `renewCredentials` (new token, then retry) | 403 `ExpiredProviderToken` | 401 |
/// | `credentialsRejected` (stop the provider) | any other 403 (`InvalidProviderToken`, …) | any other 403 (`PERMISSION_DENIED`, …) |
/// | `failed` (this push only, permanent) | anything else (400 `BadTopic`, 413 `PayloadTooLarge`, …) | anything else |
///
/// The string of every case but `delivered` is `"<status> <reason>"` (the reason when the body
/// has one), for logs and receipts.
public enum PushVerdict: Equatable, Sendable {
    case delivered
    case tokenInvalid(String)
    case retry(after: Duration?, String)
    case renewCredentials(String)
    case credentialsRejected(String)
    case failed(String)

    /// The longest `retry-after` honoured; a longer one (or one that is not a number of seconds,
    /// such as an HTTP date) leaves the backoff to the caller.
    public static let maxRetryAfterSeconds = 3600

    /// Classifies `response`, the answer of `provider` to one push.
    public init(provider: PushProvider, response: HTTP2Response) {
        switch provider {
        case .apns: self = Self.apns(response)
        case .fcm: self = Self.fcm(response)
        }
    }

    static func apns(_ response: HTTP2Response) -> PushVerdict {
        let status = response.status
        // try?: a body that is not JSON (a proxy's HTML page) has no reason; the status still decides.
        let reason = (try? JSONReader.parse(response.body))?["reason"]?.stringValue
        let text = reason.map { "\(status) \($0)" } ?? "\(status)"
        switch (status, reason) {
        case (200, _): return .delivered
        case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"): return .tokenInvalid(text)
        case (403, "ExpiredProviderToken"): return .renewCredentials(text)
        case (403, _): return .credentialsRejected(text)
        case (429, _), (500...599, _): return .retry(after: retryAfter(response), text)
        default: return .failed(text)
        }
    }

    static func fcm(_ response: HTTP2Response) -> PushVerdict {
        let status = response.status
        // try?: as for APNs, a body that is not JSON names no error; the status decides.
        let error = (try? JSONReader.parse(response.body))?["error"]
        let errorStatus = error?["status"]?.stringValue
        let details = error?["details"]?.arrayValue ?? []
        let errorCodes = details.compactMap { $0["errorCode"]?.stringValue }
        let fields = details.flatMap { $0["fieldViolations"]?.arrayValue ?? [] }.compactMap { $0["field"]?.stringValue }
        // The most specific reason: the FCM error code, else the canonical status.
        let reason = errorCodes.first ?? errorStatus
        let text = reason.map { "\(status) \($0)" } ?? "\(status)"
        let isUnregistered = errorCodes.contains("UNREGISTERED") || errorStatus == "UNREGISTERED"
        let namesToken =
            (errorCodes.contains("INVALID_ARGUMENT") || errorStatus == "INVALID_ARGUMENT")
            && fields.contains("message.token")
        switch status {
        case 200: return .delivered
        // A `where` guards only the pattern it follows: one case per status.
        case 400 where isUnregistered || namesToken: return .tokenInvalid(text)
        case 404 where isUnregistered: return .tokenInvalid(text)
        case 401: return .renewCredentials(text)
        case 403 where errorCodes.contains("SENDER_ID_MISMATCH"): return .tokenInvalid(text)
        case 403: return .credentialsRejected(text)
        case 429, 500...599: return .retry(after: retryAfter(response), text)
        default: return .failed(text)
        }
    }

    /// `retry-after` as delta-seconds (RFC 9110 §10.2.3), at most `maxRetryAfterSeconds`.
    static func retryAfter(_ response: HTTP2Response) -> Duration? {
        guard let value = response.header("retry-after"),
            let seconds = Int(value.trimmingHTTPWhitespace()), seconds >= 0, seconds <= maxRetryAfterSeconds
        else { return nil }
        return .seconds(seconds)
    }
}
