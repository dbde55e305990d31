import Foundation
import HTTP1
import Testing

@testable import PushHub

/// One record of each kind `HubRecord` has, in an order a hub could have written them.
enum EveryRecordKind {
    static func records() throws -> [HubRecord] {
        let rule = try CohortRule(json: .object(["platform": .string("ios")]))
        let experiment = try Experiment(
            key: "e", json: try JSONReader.parse(#"{"status":"running","sticky":true,"variants":[{"key":"A"}]}"#))
        let sync = Sync(
            seq: 1, target: Target(scope: .cohort("beta")), reason: "hotfix", scope: "bundle",
            hint: .object(["build": .number(42)]), collapse: "bundle", mandatory: true, createdAt: 1_700_000_000_000,
            expiresAt: 4_000_000_000_000, spreadMilliseconds: 0, jitterMilliseconds: 500, push: .offline)
        let device = PushDevice(
            user: "u2", device: "d-2", provider: .apns, token: String(repeating: "ab", count: 32),
            topic: "com.example.app", platform: "ios", appVersion: SemanticVersion("5.2.0"), claimCohorts: ["beta"],
            claims: ["tier": .string("gold")], updatedAt: 12)
        let webhook = Webhook(
            name: "ops", url: try HTTPURL(parsing: "https://hooks.example.com/pushhub?x=1"),
            events: [.screenPublished, .releaseHalted], secret: "whsec_0123456789abcdef", createdAt: 13, updatedAt: 14)
        let event = WebhookEvent(
            id: "ev-1", type: .screenPublished, subject: "screen:home", time: 15,
            data: ["screen": .string("home"), "version": .number(2)])
        var delivery = WebhookDelivery(event: event)
        delivery.attempts = 1
        delivery.lastStatus = 500
        delivery.lastError = "the receiver answered 500"
        delivery.lastAttemptAt = 16
        delivery.nextAttemptAt = 18
        return [
            .screenPublished(
                ScreenVersion(name: "home", version: 1, tree: .object(["title": .string("Hi")]), publishedAt: 5)),
            // A rollback with its author and message (the optional members of screen_published).
            .screenPublished(
                ScreenVersion(
                    name: "home", version: 2, tree: .object(["title": .string("Hi")]), publishedAt: 6, author: "ci",
                    message: "back to v1", rollbackOf: 1)),
            // A release of version 3, raised, then halted by its guard (revert: version 4).
            .releasePut(
                Release(
                    screen: "home", baseVersion: 2,
                    candidate: ScreenVersion(
                        name: "home", version: 3, tree: .object(["title": .string("New")]), publishedAt: 7,
                        author: "ci", message: "new title"),
                    qaCohort: "qa", healthGuard: ReleaseGuard(maxErrorRate: 0.05, minUnits: 20),
                    steps: [Release.Step(at: 7, actor: "ci", action: .start(basisPoints: 150))])),
            .releaseStepped(screen: "home", release: "r-3", Release.Step(at: 8, actor: "ci", action: .percent(basisPoints: 1000))),
            .releaseStepped(
                screen: "home", release: "r-3",
                Release.Step(
                    at: 9, actor: "guard",
                    action: .halt(
                        Release.Halt(
                            reason: "error rate 25%",
                            numbers: ReleaseHealth.Counts(exposed: 30, rendered: 18, errored: 6, reported: 24),
                            revertVersion: 4)))),
            .cohortSet("beta", Cohort(users: ["u1", "u2"], rule: rule)),
            .cohortUsersEdited("beta", add: ["u3"], remove: ["u1"]),
            .cohortRuleSet("beta", nil),
            .syncAppended(sync),
            .experimentPut(experiment),
            .stickyAssigned(experiment: "e", unit: "u9", variant: "A"),
            .adminTokenCreated(AdminToken(name: "ci", scopes: [.publish, .sync], digest: "ab12", createdAt: 7)),
            .componentPut(
                try Component(
                    name: "Carousel",
                    body: try JSONReader.parse(
                        #"{"versions":{"1":{"schema":{"type":"object","required":["items"]}},"2":{}}}"#)),
                at: 10),
            .appProfilePut(
                AppProfile(
                    platform: "ios", appVersion: SemanticVersion("5.0.0")!,
                    components: DeclaredComponents(["Carousel": 1, "Text": 1]), updatedAt: 11)),
            .appProfileDeleted(platform: "ios", appVersion: SemanticVersion("5.0.0")!),
            .componentDeleted("Carousel"),
            .pushDeviceSet(device),
            .pushDeviceRemoved(device.key, token: device.token),
            .webhook(.put(webhook)),
            .webhook(.event(event)),
            .webhook(
                .attempt(
                    WebhookAttempt(
                        webhook: "ops", event: "ev-1", outcome: .retry(at: 18), status: 500, error: "answered 500",
                        at: 16))),
            .webhook(.queued(webhook: "ops", delivery)),
            .webhook(.counters(webhook: "ops", WebhookQueue.Counters(delivered: 3, failed: 1, dropped: 2, retried: 4))),
            .webhook(.deleted("ops")),
            .adminTokenRevoked("ci"),
            .experimentDeleted("e"),
            .cohortDeleted("beta"),
            .screenDeleted("home"),
            .screenNumbered("home", lastVersion: 4),
            .syncNumbered(1),
        ]
    }

    /// Names every case of `HubRecord`. The switch has no `default`, so a new kind of record breaks
    /// this build until it is added to `records()` (and so to the corruption tests).
    static func kind(_ record: HubRecord) -> String {
        switch record {
        case .screenPublished: "screenPublished"
        case .screenDeleted: "screenDeleted"
        case .screenNumbered: "screenNumbered"
        case .cohortSet: "cohortSet"
        case .cohortUsersEdited: "cohortUsersEdited"
        case .cohortRuleSet: "cohortRuleSet"
        case .cohortDeleted: "cohortDeleted"
        case .experimentPut: "experimentPut"
        case .experimentDeleted: "experimentDeleted"
        case .stickyAssigned: "stickyAssigned"
        case .syncAppended: "syncAppended"
        case .syncNumbered: "syncNumbered"
        case .adminTokenCreated: "adminTokenCreated"
        case .adminTokenRevoked: "adminTokenRevoked"
        case .releasePut: "releasePut"
        case .releaseStepped: "releaseStepped"
        case .componentPut: "componentPut"
        case .componentDeleted: "componentDeleted"
        case .appProfilePut: "appProfilePut"
        case .appProfileDeleted: "appProfileDeleted"
        case .pushDeviceSet: "pushDeviceSet"
        case .pushDeviceRemoved: "pushDeviceRemoved"
        case .webhook(let webhook):
            switch webhook {
            case .put: "webhook.put"
            case .deleted: "webhook.deleted"
            case .event: "webhook.event"
            case .attempt: "webhook.attempt"
            case .queued: "webhook.queued"
            case .counters: "webhook.counters"
            }
        }
    }

    static let kindCount = 28

    /// The records as the journal stores them: JSON with the next `lsn` (1, 2, …), as `StateJournal.append` writes.
    static func payloads(firstLSN: Int = 1) throws -> [[UInt8]] {
        try records().enumerated().map { index, record in
            guard case .object(var members) = record.json else { preconditionFailure("records are JSON objects") }
            members["lsn"] = .number(Double(firstLSN + index))
            return JSONWriter.write(.object(members))
        }
    }
}

/// A journal-layout file and where its records lie, computed from the documented layout
/// (docs/architecture.md "Durability") rather than by the reader under test.
struct JournalSample {
    let bytes: [UInt8]
    let payloads: [[UInt8]]
    /// Each record's bytes, header included.
    let spans: [Range<Int>]

    /// Lays out `payloads` after `fileHeaderBytes` with records of `recordHeaderBytes`.
    init(bytes: [UInt8], payloads: [[UInt8]], fileHeaderBytes: Int, recordHeaderBytes: Int) {
        self.bytes = bytes
        self.payloads = payloads
        var spans: [Range<Int>] = []
        var offset = fileHeaderBytes
        for payload in payloads {
            spans.append(offset..<offset + recordHeaderBytes + payload.count)
            offset += recordHeaderBytes + payload.count
        }
        precondition(offset == bytes.count, "the sample is laid out as documented")
        self.spans = spans
    }

    /// A format 2 file as `Journal` writes it (three group commits on a new file).
    static func format2(_ payloads: [[UInt8]]) throws -> JournalSample {
        let path = NSTemporaryDirectory() + "pushhub-journal-\(UUID().uuidString)"
        defer { unlink(path) }
        let journal = try Journal(path: path)
        let thirds = [0, payloads.count / 3, 2 * payloads.count / 3, payloads.count]
        for index in 0..<3 { try journal.append(Array(payloads[thirds[index]..<thirds[index + 1]])) }
        let bytes = try #require(try FileBytes.read(path))
        return JournalSample(bytes: bytes, payloads: payloads, fileHeaderBytes: 8, recordHeaderBytes: 12)
    }

    /// A format 1 file (PushHub before format 2), framed here by hand:
    /// length (u32 LE), CRC-32 of the payload (u32 LE), payload; no file header.
    static func format1(_ payloads: [[UInt8]]) -> JournalSample {
        var bytes: [UInt8] = []
        for payload in payloads {
            bytes += withUnsafeBytes(of: UInt32(payload.count).littleEndian, Array.init)  // length
            bytes += withUnsafeBytes(of: CRC32.checksum(payload).littleEndian, Array.init)  // CRC-32 of the payload
            bytes += payload
        }
        return JournalSample(bytes: bytes, payloads: payloads, fileHeaderBytes: 0, recordHeaderBytes: 8)
    }

    /// Where the file header ends and the first record begins.
    var firstRecord: Int { spans.first?.lowerBound ?? bytes.count }

    /// The offset of the record holding byte `position` (0 for the file header).
    func recordStart(holding position: Int) -> Int {
        spans.last { $0.lowerBound <= position }?.lowerBound ?? 0
    }

    /// Offsets where a record may begin or the file may end: 0, the end of the file header, each record's end.
    var boundaries: Set<Int> { Set([0, firstRecord] + spans.map(\.upperBound)) }

    /// The payloads of the records that end at or before `offset`.
    func payloads(before offset: Int) -> [[UInt8]] {
        Array(payloads[..<spans.count(where: { $0.upperBound <= offset })])
    }
}
