/// `PushHub-Signature` (DESIGN §18): `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`,
/// the scheme Stripe made common — the time is signed with the body, so a receiver that checks
/// it (within 5 minutes, docs/integrations.md) refuses a captured delivery replayed later.
enum WebhookSignature {
    static let header = "PushHub-Signature"

    /// The header's value for `body` signed with `secret` at `seconds` (Unix time).
    static func value(body: [UInt8], secret: String, seconds: Int) -> String {
        let signed = Array("\(seconds).".utf8) + body
        let mac = JWTVerifier.hmacSHA256(key: Array(secret.utf8), data: signed)
        return "t=\(seconds),v1=" + Hex.lowercase(mac)
    }
}
