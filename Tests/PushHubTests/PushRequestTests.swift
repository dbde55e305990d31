import HTTP2
import Testing

@testable import PushHub

@Suite("push requests: the APNs and FCM requests for one sync, and what each answer means")
struct PushRequestTests {
    static let message = PushMessage(
        syncID: "s-12", seq: 12, reason: "screens", scope: "home",
        hint: .object(["screen": .string("home"), "v": .number(3)]),
        mandatory: true, collapse: "home", expiresAtMilliseconds: 1_700_000_090_500)
    static let apnsDevice = PushTarget(
        provider: .apns, token: "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
        topic: "com.example.app")
    static let fcmDevice = PushTarget(provider: .fcm, token: "dGVzdA:APA91bH-x_y", topic: nil)

    // MARK: The sync object

    @Test("the sync object has the socket's members in order, hint and mandatory only when set")
    func syncObject() {
        #expect(
            String(decoding: PushPayload.syncObject(Self.message), as: UTF8.self)
                == #"{"type":"sync","id":"s-12","seq":12,"reason":"screens","scope":"home","hint":{"screen":"home","v":3},"mandatory":true}"#
        )
        var plain = Self.message
        plain.hint = nil
        plain.mandatory = false
        #expect(
            String(decoding: PushPayload.syncObject(plain), as: UTF8.self)
                == #"{"type":"sync","id":"s-12","seq":12,"reason":"screens","scope":"home"}"#)
    }

    // MARK: APNs

    @Test("the APNs request: POST /3/device/<token>, the background push headers, the aps + pushhub body")
    func apnsRequest() throws {
        let request = try APNsRequest.make(
            message: Self.message, target: Self.apnsDevice, authority: "api.push.apple.com", providerToken: "JWT")
        #expect(request.method == "POST")
        #expect(request.scheme == "https")
        #expect(request.authority == "api.push.apple.com")
        #expect(request.path == "/3/device/" + Self.apnsDevice.token)
        #expect(
            request.headers == [
                HeaderField("authorization", "bearer JWT"), HeaderField("apns-topic", "com.example.app"),
                HeaderField("apns-push-type", "background"), HeaderField("apns-priority", "5"),
                HeaderField("apns-expiration", "1700000090"), HeaderField("apns-collapse-id", "home"),
                HeaderField("content-type", "application/json"),
            ])
        #expect(
            String(decoding: request.body, as: UTF8.self)
                == #"{"aps":{"content-available":1},"pushhub":{"type":"sync","id":"s-12","seq":12,"reason":"screens","scope":"home","hint":{"screen":"home","v":3},"mandatory":true}}"#
        )
        #expect(try JSONReader.parse(request.body)["aps"] == .object(["content-available": .number(1)]))
    }

    @Test("no collapse key, no apns-collapse-id")
    func apnsWithoutCollapse() throws {
        var message = Self.message
        message.collapse = nil
        let request = try APNsRequest.make(
            message: message, target: Self.apnsDevice, authority: "a", providerToken: "t")
        #expect(!request.headers.contains { $0.name == "apns-collapse-id" })
        #expect(request.headers.count == 6)
    }

    @Test("a collapse key longer than 64 bytes or not visible ASCII becomes its SHA-256 in hex")
    func collapseIDs() {
        let sixtyFour = String(repeating: "k", count: 64)
        #expect(APNsRequest.collapseID(sixtyFour) == sixtyFour)
        #expect(APNsRequest.collapseID(sixtyFour + "k") == ScreenHash.of(canonical: Array((sixtyFour + "k").utf8)))
        // Digests computed with Python's hashlib.
        #expect(
            APNsRequest.collapseID("screen:" + String(repeating: "x", count: 60))
                == "83a007ca94a3b1791aa283dd80f7851d7450ff057df69fcfa94944df9d53dff5")
        #expect(APNsRequest.collapseID("café") == "850f7dc43910ff890f8879c0ed26fe697c93a067ad93a7d50f466a7028a9bf4e")
    }

    @Test("an APNs body of 4096 bytes is sent; one of 4097 fails as payload too large")
    func apnsPayloadLimit() throws {
        var message = Self.message
        message.hint = .string("")
        let overhead = try APNsRequest.make(
            message: message, target: Self.apnsDevice, authority: "a", providerToken: "t"
        )
        .body.count
        message.hint = .string(String(repeating: "h", count: 4096 - overhead))
        #expect(
            try APNsRequest.make(message: message, target: Self.apnsDevice, authority: "a", providerToken: "t").body
                .count == 4096)
        message.hint = .string(String(repeating: "h", count: 4097 - overhead))
        #expect(throws: PushRequestError.payloadTooLarge(provider: .apns, bytes: 4097, limit: 4096)) {
            try APNsRequest.make(message: message, target: Self.apnsDevice, authority: "a", providerToken: "t")
        }
        #expect(
            PushRequestError.payloadTooLarge(provider: .apns, bytes: 4097, limit: 4096).description.hasPrefix(
                "payload too large"))
    }

    @Test("devices APNs cannot take: no topic, a token that is not a path segment, an FCM device")
    func apnsRefusals() {
        var device = Self.apnsDevice
        device.topic = nil
        #expect(throws: PushRequestError.missingTopic) {
            try APNsRequest.make(message: Self.message, target: device, authority: "a", providerToken: "t")
        }
        for token in ["", "ab/cd", "ab cd", "ab?x=1", "abc\r\nx: y", "é", "0g"] {
            device = Self.apnsDevice
            device.token = token
            #expect(throws: PushRequestError.badDeviceToken(provider: .apns)) {
                try APNsRequest.make(message: Self.message, target: device, authority: "a", providerToken: "t")
            }
        }
        #expect(throws: PushRequestError.wrongProvider(expected: .apns, found: .fcm)) {
            try APNsRequest.make(message: Self.message, target: Self.fcmDevice, authority: "a", providerToken: "t")
        }
    }

    // MARK: FCM

    @Test("the FCM request: POST messages:send, a data message carrying the sync as a string, normal priority, ttl")
    func fcmRequest() throws {
        let request = try FCMRequest.make(
            message: Self.message, target: Self.fcmDevice, projectID: "pushhub-test", authority: "fcm.googleapis.com",
            accessToken: "ya29.t", nowMilliseconds: 1_700_000_000_000)
        #expect(request.method == "POST")
        #expect((request.scheme, request.authority) == ("https", "fcm.googleapis.com"))
        #expect(request.path == "/v1/projects/pushhub-test/messages:send")
        #expect(
            request.headers == [
                HeaderField("authorization", "Bearer ya29.t"),
                HeaderField("content-type", "application/json; charset=UTF-8"),
            ])
        let sync = String(decoding: PushPayload.syncObject(Self.message), as: UTF8.self)
        var expected = Array(#"{"message":{"token":"dGVzdA:APA91bH-x_y","data":{"pushhub":"#.utf8)
        JSONWriter.writeString(sync, to: &expected)
        expected += #"},"android":{"priority":"normal","ttl":"90s","collapse_key":"home"}}}"#.utf8
        #expect(String(decoding: request.body, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        // The data value parses back into the sync object.
        let data = try JSONReader.parse(request.body)["message"]?["data"]?["pushhub"]?.stringValue
        #expect(try data.map { try JSONReader.parse($0) } == JSONReader.parse(sync))
    }

    @Test(
        "ttl is the whole seconds left, 0 once expired, at most 28 days; no collapse key, no collapse_key",
        arguments: [
            (1_700_000_090_500, 1_700_000_000_000, #"{"priority":"normal","ttl":"90s"}"#),
            (1_700_000_000_999, 1_700_000_000_000, #"{"priority":"normal","ttl":"0s"}"#),
            (1_700_000_000_000, 1_700_000_005_000, #"{"priority":"normal","ttl":"0s"}"#),
            (1_700_000_000_000 + 60 * 86_400_000, 1_700_000_000_000, #"{"priority":"normal","ttl":"2419200s"}"#),
        ])
    func fcmTTL(_ expiresAt: Int, _ now: Int, _ android: String) throws {
        var message = Self.message
        message.collapse = nil
        message.expiresAtMilliseconds = expiresAt
        let request = try FCMRequest.make(
            message: message, target: Self.fcmDevice, projectID: "p", authority: "a", accessToken: "t",
            nowMilliseconds: now)
        #expect(try JSONReader.parse(request.body)["message"]?["android"] == JSONReader.parse(android))
    }

    @Test("an FCM sync of 4096 bytes is sent; 4097 fails as payload too large; other devices are refused")
    func fcmRefusals() throws {
        var message = Self.message
        message.hint = .string("")
        let overhead = PushPayload.syncObject(message).count
        message.hint = .string(String(repeating: "h", count: 4096 - overhead))
        _ = try FCMRequest.make(
            message: message, target: Self.fcmDevice, projectID: "p", authority: "a", accessToken: "t",
            nowMilliseconds: 0)
        message.hint = .string(String(repeating: "h", count: 4097 - overhead))
        #expect(throws: PushRequestError.payloadTooLarge(provider: .fcm, bytes: 4097, limit: 4096)) {
            try FCMRequest.make(
                message: message, target: Self.fcmDevice, projectID: "p", authority: "a", accessToken: "t",
                nowMilliseconds: 0)
        }
        #expect(throws: PushRequestError.wrongProvider(expected: .fcm, found: .apns)) {
            try FCMRequest.make(
                message: Self.message, target: Self.apnsDevice, projectID: "p", authority: "a", accessToken: "t",
                nowMilliseconds: 0)
        }
        #expect(throws: PushRequestError.badDeviceToken(provider: .fcm)) {
            try FCMRequest.make(
                message: Self.message, target: PushTarget(provider: .fcm, token: "", topic: nil), projectID: "p",
                authority: "a", accessToken: "t", nowMilliseconds: 0)
        }
    }

    // MARK: Verdicts

    static func response(_ status: Int, _ body: String = "", retryAfter: String? = nil) -> HTTP2Response {
        HTTP2Response(
            status: status, headers: retryAfter.map { [HeaderField("retry-after", $0)] } ?? [], body: Array(body.utf8))
    }

    static func apnsReason(_ reason: String) -> String { #"{"reason":"\#(reason)"}"# }

    @Test(
        "every APNs answer Apple documents has its verdict",
        arguments: [
            (200, "", PushVerdict.delivered),
            (410, apnsReason("Unregistered"), .tokenInvalid("410 Unregistered")),
            (410, apnsReason("ExpiredToken"), .tokenInvalid("410 ExpiredToken")),
            (400, apnsReason("BadDeviceToken"), .tokenInvalid("400 BadDeviceToken")),
            (400, apnsReason("DeviceTokenNotForTopic"), .tokenInvalid("400 DeviceTokenNotForTopic")),
            (403, apnsReason("ExpiredProviderToken"), .renewCredentials("403 ExpiredProviderToken")),
            (403, apnsReason("InvalidProviderToken"), .credentialsRejected("403 InvalidProviderToken")),
            (403, apnsReason("MissingProviderToken"), .credentialsRejected("403 MissingProviderToken")),
            (403, apnsReason("BadCertificateEnvironment"), .credentialsRejected("403 BadCertificateEnvironment")),
            (429, apnsReason("TooManyRequests"), .retry(after: nil, "429 TooManyRequests")),
            (429, apnsReason("TooManyProviderTokenUpdates"), .retry(after: nil, "429 TooManyProviderTokenUpdates")),
            (500, apnsReason("InternalServerError"), .retry(after: nil, "500 InternalServerError")),
            (503, apnsReason("ServiceUnavailable"), .retry(after: nil, "503 ServiceUnavailable")),
            (503, apnsReason("Shutdown"), .retry(after: nil, "503 Shutdown")),
            (502, "<html>bad gateway</html>", .retry(after: nil, "502")),
            (400, apnsReason("BadTopic"), .failed("400 BadTopic")),
            (400, apnsReason("BadCollapseId"), .failed("400 BadCollapseId")),
            (400, apnsReason("BadExpirationDate"), .failed("400 BadExpirationDate")),
            (400, apnsReason("InvalidPushType"), .failed("400 InvalidPushType")),
            (400, apnsReason("TopicDisallowed"), .failed("400 TopicDisallowed")),
            (404, apnsReason("BadPath"), .failed("404 BadPath")),
            (405, apnsReason("MethodNotAllowed"), .failed("405 MethodNotAllowed")),
            (413, apnsReason("PayloadTooLarge"), .failed("413 PayloadTooLarge")),
            (400, "", .failed("400")),
        ])
    func apnsVerdicts(_ status: Int, _ body: String, _ verdict: PushVerdict) {
        #expect(PushVerdict(provider: .apns, response: Self.response(status, body)) == verdict)
    }

    static func fcmError(_ code: Int, _ status: String, errorCode: String? = nil, field: String? = nil) -> String {
        var details: [String] = []
        if let errorCode {
            details.append(
                #"{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#(errorCode)"}"#)
        }
        if let field {
            details.append(
                #"{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"\#(field)","description":"Invalid registration token"}]}"#
            )
        }
        return
            #"{"error":{"code":\#(code),"message":"m","status":"\#(status)","details":[\#(details.joined(separator: ","))]}}"#
    }

    @Test(
        "every FCM answer Firebase documents has its verdict",
        arguments: [
            (200, #"{"name":"projects/p/messages/0:1"}"#, PushVerdict.delivered),
            (404, fcmError(404, "NOT_FOUND", errorCode: "UNREGISTERED"), .tokenInvalid("404 UNREGISTERED")),
            (400, fcmError(400, "INVALID_ARGUMENT", errorCode: "UNREGISTERED"), .tokenInvalid("400 UNREGISTERED")),
            (
                400, fcmError(400, "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT", field: "message.token"),
                .tokenInvalid("400 INVALID_ARGUMENT")
            ),
            (
                400, fcmError(400, "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT", field: "message.android.ttl"),
                .failed("400 INVALID_ARGUMENT")
            ),
            (400, fcmError(400, "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT"), .failed("400 INVALID_ARGUMENT")),
            (404, fcmError(404, "NOT_FOUND"), .failed("404 NOT_FOUND")),
            (401, fcmError(401, "UNAUTHENTICATED"), .renewCredentials("401 UNAUTHENTICATED")),
            (
                401, fcmError(401, "UNAUTHENTICATED", errorCode: "THIRD_PARTY_AUTH_ERROR"),
                .renewCredentials("401 THIRD_PARTY_AUTH_ERROR")
            ),
            (403, fcmError(403, "PERMISSION_DENIED"), .credentialsRejected("403 PERMISSION_DENIED")),
            (
                403, fcmError(403, "PERMISSION_DENIED", errorCode: "SENDER_ID_MISMATCH"),
                .tokenInvalid("403 SENDER_ID_MISMATCH")
            ),
            (
                429, fcmError(429, "RESOURCE_EXHAUSTED", errorCode: "QUOTA_EXCEEDED"),
                .retry(after: nil, "429 QUOTA_EXCEEDED")
            ),
            (500, fcmError(500, "INTERNAL", errorCode: "INTERNAL"), .retry(after: nil, "500 INTERNAL")),
            (503, fcmError(503, "UNAVAILABLE", errorCode: "UNAVAILABLE"), .retry(after: nil, "503 UNAVAILABLE")),
            (413, "", .failed("413")),
        ])
    func fcmVerdicts(_ status: Int, _ body: String, _ verdict: PushVerdict) {
        #expect(PushVerdict(provider: .fcm, response: Self.response(status, body)) == verdict)
    }

    @Test(
        "retry-after in seconds is honoured up to an hour; dates, negatives and junk are left to the backoff",
        arguments: [
            ("120", Duration?.some(.seconds(120))), (" 7 ", .seconds(7)), ("0", .seconds(0)), ("3600", .seconds(3600)),
            ("3601", nil), ("-1", nil), ("Wed, 21 Oct 2015 07:28:00 GMT", nil), ("1.5", nil), ("", nil),
        ])
    func retryAfter(_ value: String, _ expected: Duration?) {
        for provider in PushProvider.allCases {
            #expect(
                PushVerdict(provider: provider, response: Self.response(429, retryAfter: value))
                    == .retry(after: expected, "429"))
        }
        #expect(
            PushVerdict(provider: .fcm, response: Self.response(503, retryAfter: value))
                == .retry(after: expected, "503"))
    }
}
