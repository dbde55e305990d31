import Testing

@testable import PushHub

/// The push registrations (DESIGN §17): kept per device, replaced, removed only while the dead
/// token is still the device's, journaled and restored, and matched against a sync's target as
/// the device's session would be.
@Suite struct DeviceRegistryTests {
    static func device(
        _ user: String?, _ id: String, provider: PushProvider = .apns, token: String = "t1", platform: String = "ios",
        version: String = "5.2.0", claims: JSONObject = [:]
    ) -> PushDevice {
        PushDevice(
            user: user, device: id, provider: provider, token: token,
            topic: provider == .apns ? "com.example.app" : nil,
            platform: platform, appVersion: SemanticVersion(version), claimCohorts: [], claims: claims, updatedAt: 1)
    }

    @Test("a device has one registration: a new token replaces the old, a stale dead token removes nothing")
    func replaceAndRemove() {
        var registry = DeviceRegistry()
        registry.set(Self.device("u1", "d1", token: "old"))
        registry.set(Self.device("u1", "d1", token: "new"))
        registry.set(Self.device("u1", "d2", provider: .fcm, token: "f", platform: "android"))
        #expect(registry.count == 2)
        #expect(registry.devices(of: "u1").map(\.token) == ["new", "f"])
        registry.remove(DeviceKey(user: "u1", device: "d1"), token: "old")
        #expect(registry.count == 2, "the provider's verdict on the old token must not remove the new one")
        registry.remove(DeviceKey(user: "u1", device: "d1"), token: "new")
        registry.remove(DeviceKey(user: "u1", device: "d2"), token: nil)
        #expect(registry.count == 0)
        #expect(registry.devices(of: "u1").isEmpty)
    }

    @Test("a target reaches the registered devices its session would: user, platform, version, cohort claims")
    func targeting() throws {
        var registry = DeviceRegistry()
        registry.set(Self.device("u1", "phone"))
        registry.set(Self.device("u1", "pixel", provider: .fcm, platform: "android", version: "6.0.0"))
        registry.set(Self.device("u2", "ipad", claims: ["tier": .string("gold")]))
        registry.set(Self.device(nil, "anon"))
        var view = HubView()
        view.apply(
            .cohortChanged(
                "gold",
                Cohort(users: [], rule: try CohortRule(json: try JSONReader.parse(#"{"claims":{"tier":"gold"}}"#)))),
            keepVersions: 1)
        func reached(_ json: String) throws -> [String] {
            registry.devices(for: try Target(json: try JSONReader.parse(json)), in: view).map(\.device).sorted()
        }
        #expect(try reached(#"{"user":"u1"}"#) == ["phone", "pixel"])
        #expect(try reached(#"{"users":["u1","u2"],"platform":"ios"}"#) == ["ipad", "phone"])
        #expect(try reached(#"{"all":true,"app_version":">=6.0.0"}"#) == ["pixel"])
        #expect(try reached(#"{"cohort":"gold"}"#) == ["ipad"])
        #expect(try reached(#"{"all":true}"#) == ["anon", "ipad", "phone", "pixel"])
    }

    @Test("registrations survive the journal and a snapshot; a re-registration after a token refresh is no change")
    func durable() throws {
        var state = HubState(keepVersions: 4)
        let phone = Self.device("u1", "phone", claims: ["tier": .string("gold")])
        state.apply(.pushDeviceSet(phone))
        state.apply(.pushDeviceSet(Self.device(nil, "anon", provider: .fcm, platform: "android")))
        var restored = HubState(keepVersions: 4)
        for record in state.snapshotRecords() { restored.apply(try HubRecord(json: record.json)) }
        #expect(restored.devices == state.devices && restored.devices.count == 2)

        let client = ClientAttributes(
            session: "s", user: "u1", device: "phone", platform: "ios", appVersion: SemanticVersion("5.2.0"),
            claimCohorts: [], claims: ["tier": .string("gold"), "exp": .number(99), "iat": .number(3)], connectedAt: 5)
        let again = PushDevice(client, provider: .apns, token: "t1", topic: "com.example.app", at: 9)
        #expect(again.isSameRegistration(as: phone))
        #expect(
            !PushDevice(client, provider: .apns, token: "t2", topic: "com.example.app", at: 9).isSameRegistration(
                as: phone))
    }

    @Test("a sync's push mode is journaled, and a record without one reads as none")
    func syncPushMode() throws {
        let sync = Sync(
            seq: 3, target: Target(scope: .all), reason: "hotfix", scope: "bundle", hint: nil, collapse: nil,
            mandatory: false, createdAt: 1, expiresAt: 2, spreadMilliseconds: 0, jitterMilliseconds: 0, push: .always)
        guard case .syncAppended(let read) = try HubRecord(json: HubRecord.syncAppended(sync).json) else {
            Issue.record("not a sync")
            return
        }
        #expect(read.push == .always)
        var json = HubRecord.syncAppended(sync).json.objectValue!
        json["push"] = nil
        guard case .syncAppended(let old) = try HubRecord(json: .object(json)) else { return }
        #expect(old.push == .none)
        json["push"] = .string("sometimes")
        #expect(throws: HubRecord.DecodingError.self) { try HubRecord(json: .object(json)) }
    }

    @Test("a page of devices is the first of them in order, whatever the collection's order")
    func smallest() {
        var generator = SystemRandomNumberGenerator()
        for size in [0, 1, 5, 100, 1000] {
            let values = (0..<size).map { _ in Int.random(in: 0..<500, using: &generator) }
            for count in [1, 3, 100, 2000] {
                #expect(values.smallest(count, by: <) == Array(values.sorted().prefix(count)))
            }
        }
    }

    @Test("push_token: provider, token (null removes), an APNs topic; anything else is a bad_message")
    func wire() throws {
        func parse(_ text: String) throws -> ClientMessage {
            try Array(text.utf8).withUnsafeBytes { buffer in try ClientMessage.parse(buffer) }
        }
        #expect(
            try parse(#"{"type":"push_token","provider":"apns","token":"ab12","topic":"com.x"}"#)
                == .pushToken(provider: .apns, token: "ab12", topic: "com.x"))
        #expect(
            try parse(#"{"type":"push_token","provider":"fcm","token":"f:1"}"#)
                == .pushToken(provider: .fcm, token: "f:1", topic: nil))
        #expect(try parse(#"{"type":"push_token","provider":"apns","token":null}"#) == .pushTokenRemoved)
        #expect(try parse(#"{"type":"push_token","token":null}"#) == .pushTokenRemoved)
        for bad in [
            #"{"type":"push_token","provider":"gcm","token":"x"}"#, #"{"type":"push_token","provider":"fcm"}"#,
            #"{"type":"push_token","provider":"fcm","token":""}"#,
            #"{"type":"push_token","provider":"fcm","token":"a b"}"#,
            #"{"type":"push_token","provider":"apns","token":"ab"}"#,
            #"{"type":"push_token","provider":"fcm","token":"\#(String(repeating: "a", count: 1025))"}"#,
            #"{"type":"push_token","provider":"apns","token":"ab","topic":7}"#,
            #"{"type":"push_token","provider":"apns","token":"ab/../x","topic":"com.x"}"#,
            #"{"type":"push_token","provider":"apns","token":"0g","topic":"com.x"}"#,
        ] {
            #expect(throws: WireError.self, "\(bad)") { try parse(bad) }
        }
    }
}
