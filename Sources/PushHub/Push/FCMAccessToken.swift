/// An OAuth 2.0 access token for FCM's HTTP v1 API (RFC 6749 §5.1), from the token endpoint's
/// answer to `FCMServiceAccount`'s assertion, cached until shortly before it expires.
///
/// Invariants: `value` is non-empty and holds only characters a header value may carry;
/// `expiresAtSeconds` is `issued + expires_in`; the token is usable until `renewBeforeSeconds`
/// (60 s) before that, so no request leaves with a token that expires on its way.
public struct FCMAccessToken: Equatable, Sendable {
    /// Renew this long before expiry.
    public static let renewBeforeSeconds = 60

    public let value: String
    /// Seconds since the Unix epoch.
    public let expiresAtSeconds: Int

    public init(value: String, expiresAtSeconds: Int) {
        self.value = value
        self.expiresAtSeconds = expiresAtSeconds
    }

    /// The token in the endpoint's answer `{"access_token","expires_in","token_type":"Bearer"}`
    /// received at `nowSeconds`.
    /// - Throws: `.tokenRefused` with the status and the endpoint's `error`/`error_description`
    ///   for any answer but a 200 with a bearer token (`isTransient` for 429 and 5xx).
    public init(status: Int, body: [UInt8], nowSeconds: Int) throws(PushCredentialError) {
        // try?: an answer that is not JSON is refused below, saying so (its parse error adds nothing).
        let answer = (try? JSONReader.parse(body))?.objectValue
        guard status == 200 else {
            let error = answer?["error"]?.stringValue
            let detail = answer?["error_description"]?.stringValue
            let reason = [error, detail].compactMap { $0 }.joined(separator: ": ")
            throw .tokenRefused(status: status, reason: reason.isEmpty ? "no OAuth error in the answer" : reason)
        }
        guard let answer else { throw .tokenRefused(status: status, reason: "the answer is not a JSON object") }
        guard let value = answer["access_token"]?.stringValue, value.isVisibleASCII else {
            throw .tokenRefused(status: status, reason: "the answer has no usable access_token")
        }
        guard answer["token_type"]?.stringValue?.lowercased() == "bearer" else {
            throw .tokenRefused(status: status, reason: "the token_type is not Bearer")
        }
        guard let lifetime = answer["expires_in"]?.intValue, lifetime > 0, lifetime <= 366 * 86400 else {
            throw .tokenRefused(status: status, reason: "expires_in is not a positive number of seconds")
        }
        self.init(value: value, expiresAtSeconds: nowSeconds + lifetime)
    }

    /// Whether the token may still be sent at `nowSeconds`.
    public func isUsable(nowSeconds: Int) -> Bool { nowSeconds < expiresAtSeconds - Self.renewBeforeSeconds }
}
