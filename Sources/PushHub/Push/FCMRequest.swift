import HTTP2

/// The FCM HTTP v1 request for one silent push (DESIGN §17; Firebase's "projects.messages.send"):
/// a data message, which Android hands to the app's FirebaseMessagingService without showing
/// anything.
///
///     POST /v1/projects/<project_id>/messages:send
///     authorization: Bearer <access token>        (FCMAccessToken)
///     content-type: application/json; charset=UTF-8
///
///     {"message":{"token":<registration token>,
///                 "data":{"pushhub":"<sync object as a JSON string>"},
///                 "android":{"priority":"normal","ttl":"<seconds>s"[,"collapse_key":<collapse>]}}}
///
/// Invariants: the data (the sync object) is at most `PushPayload.maxBytes`, FCM's limit;
/// `ttl` is the time left until the sync expires, in whole seconds, between 0 and FCM's
/// maximum of 28 days.
public enum FCMRequest {
    /// FCM's longest `ttl`: 4 weeks.
    public static let maxTTLSeconds = 28 * 86400

    /// - Parameters:
    ///   - projectID: the service account's `project_id`.
    ///   - authority: FCM's host (`fcm.googleapis.com`, or a stand-in's `host:port`).
    ///   - accessToken: from `FCMAccessToken`.
    ///   - nowMilliseconds: now, for the `ttl`.
    /// - Throws: `.payloadTooLarge` when the sync object exceeds 4096 bytes; `.badDeviceToken`,
    ///   `.wrongProvider` for a target FCM cannot take.
    public static func make(
        message: PushMessage, target: PushTarget, projectID: String, authority: String, accessToken: String,
        nowMilliseconds: Int
    ) throws(PushRequestError) -> HTTP2Request {
        guard target.provider == .fcm else { throw .wrongProvider(expected: .fcm, found: target.provider) }
        guard target.token.isVisibleASCII else { throw .badDeviceToken(provider: .fcm) }
        let sync = PushPayload.syncObject(message)
        guard sync.count <= PushPayload.maxBytes else {
            throw .payloadTooLarge(provider: .fcm, bytes: sync.count, limit: PushPayload.maxBytes)
        }
        let ttlSeconds = min(max(0, (message.expiresAtMilliseconds - nowMilliseconds) / 1000), maxTTLSeconds)
        var android: [(String, JSONValue)] = [("priority", .string("normal")), ("ttl", .string("\(ttlSeconds)s"))]
        if let collapse = message.collapse { android.append(("collapse_key", .string(collapse))) }
        var body = Array(#"{"message":{"token":"#.utf8)
        JSONWriter.writeString(target.token, to: &body)
        body += #","data":"#.utf8
        body += ServerMessage.object([("pushhub", .string(String(decoding: sync, as: UTF8.self)))])
        body += #","android":"#.utf8
        body += ServerMessage.object(android)
        body += "}}".utf8
        return HTTP2Request(
            method: "POST", scheme: "https", authority: authority, path: "/v1/projects/\(projectID)/messages:send",
            headers: [
                HeaderField("authorization", "Bearer " + accessToken),
                HeaderField("content-type", "application/json; charset=UTF-8"),
            ],
            body: body)
    }
}
