import HTTP2

/// The APNs request for one silent push (DESIGN §17; Apple's "Sending notification requests to
/// APNs"): a background notification that wakes the app with the sync.
///
///     POST /3/device/<device token>
///     authorization: bearer <provider token>      (APNsProviderToken)
///     apns-topic: <bundle id>
///     apns-push-type: background
///     apns-priority: 5                            (background pushes must not use 10)
///     apns-expiration: <expiry, Unix seconds>
///     apns-collapse-id: <collapse key>            (only when the sync has one)
///     content-type: application/json
///
///     {"aps":{"content-available":1},"pushhub":<sync object>}
///
/// Invariant: the body is at most `PushPayload.maxBytes` (APNs' 4 KiB limit for a notification).
public enum APNsRequest {
    /// APNs' limit on `apns-collapse-id`.
    public static let maxCollapseIDBytes = 64

    /// - Parameters:
    ///   - authority: the APNs host (`api.push.apple.com`, or a stand-in's `host:port`).
    ///   - providerToken: from `APNsProviderToken.token(nowSeconds:)`.
    /// - Throws: `.payloadTooLarge` when the sync (its hint) makes the body exceed 4096 bytes;
    ///   `.missingTopic`, `.badDeviceToken`, `.wrongProvider` for a target APNs cannot take.
    public static func make(message: PushMessage, target: PushTarget, authority: String, providerToken: String)
        throws(PushRequestError) -> HTTP2Request
    {
        guard target.provider == .apns else { throw .wrongProvider(expected: .apns, found: target.provider) }
        guard target.token.isHexadecimal else { throw .badDeviceToken(provider: .apns) }
        guard let topic = target.topic, topic.isVisibleASCII else { throw .missingTopic }
        var body = Array(#"{"aps":{"content-available":1},"pushhub":"#.utf8)
        body += PushPayload.syncObject(message)
        body.append(UInt8(ascii: "}"))
        guard body.count <= PushPayload.maxBytes else {
            throw .payloadTooLarge(provider: .apns, bytes: body.count, limit: PushPayload.maxBytes)
        }
        var headers = [
            HeaderField("authorization", "bearer " + providerToken),
            HeaderField("apns-topic", topic),
            HeaderField("apns-push-type", "background"),
            HeaderField("apns-priority", "5"),
            HeaderField("apns-expiration", String(max(0, message.expiresAtMilliseconds / 1000))),
        ]
        if let collapse = message.collapse { headers.append(HeaderField("apns-collapse-id", collapseID(collapse))) }
        headers.append(HeaderField("content-type", "application/json"))
        return HTTP2Request(
            method: "POST", scheme: "https", authority: authority, path: "/3/device/" + target.token,
            headers: headers, body: body)
    }

    /// The `apns-collapse-id` for a sync's collapse key: the key itself when it fits APNs' 64
    /// bytes and is visible ASCII; otherwise the lower-case hex SHA-256 of its UTF-8, truncated to
    /// 64 characters — the same key always gives the same id, so collapsing still works, and two
    /// different long keys collide only as SHA-256 prefixes do.
    public static func collapseID(_ key: String) -> String {
        if key.utf8.count <= maxCollapseIDBytes && key.isVisibleASCII { return key }
        // Lower-case hex SHA-256 of the bytes is what ScreenHash computes (64 characters: it fits).
        return String(ScreenHash.of(canonical: Array(key.utf8)).prefix(maxCollapseIDBytes))
    }
}
