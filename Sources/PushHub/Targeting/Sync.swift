import Synchronization

/// One "sync now" notification (DESIGN §5), immutable but for its receipts.
///
/// Invariants: `seq` is unique and increasing across the hub; `id == "s-\(seq)"`; `frame` is
/// the complete WebSocket frame every target gets (encoded once).
public final class Sync: Sendable {
    public let seq: Int
    public let target: Target
    public let reason: String
    public let scope: String
    public let hint: JSONValue?
    public let collapse: String?
    public let mandatory: Bool
    /// Milliseconds since the Unix epoch.
    public let createdAt: Int
    public let expiresAt: Int
    public let spreadMilliseconds: Int
    public let jitterMilliseconds: Int
    /// Whether it also goes out as a silent push (DESIGN §17).
    public let push: PushMode
    public let frame: [UInt8]
    public let receipts = Receipts()

    public var id: String { "s-\(seq)" }

    /// Per-sync counters (DESIGN §5 receipts), updated by every loop.
    public final class Receipts: Sendable {
        public let targetedOnline = Atomic<Int>(0)
        public let delivered = Atomic<Int>(0)
        public let acked = Atomic<Int>(0)
        /// Silent pushes the provider accepted, and those that failed for good (DESIGN §17).
        public let pushed = Atomic<Int>(0)
        public let pushFailed = Atomic<Int>(0)

        /// The counts as they are now.
        var counts: ReceiptCounts {
            ReceiptCounts(
                targetedOnline: targetedOnline.load(ordering: .relaxed), delivered: delivered.load(ordering: .relaxed),
                acked: acked.load(ordering: .relaxed), pushed: pushed.load(ordering: .relaxed),
                pushFailed: pushFailed.load(ordering: .relaxed))
        }
    }

    public init(
        seq: Int, target: Target, reason: String, scope: String, hint: JSONValue?, collapse: String?, mandatory: Bool,
        createdAt: Int, expiresAt: Int, spreadMilliseconds: Int, jitterMilliseconds: Int, push: PushMode = .none
    ) {
        self.seq = seq
        self.target = target
        self.reason = reason
        self.scope = scope
        self.hint = hint
        self.collapse = collapse
        self.mandatory = mandatory
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.spreadMilliseconds = spreadMilliseconds
        self.jitterMilliseconds = jitterMilliseconds
        self.push = push
        frame = Sync.frame(
            seq: seq, reason: reason, scope: scope, hint: hint, mandatory: mandatory, jitter: jitterMilliseconds)
    }

    static func frame(seq: Int, reason: String, scope: String, hint: JSONValue?, mandatory: Bool, jitter: Int)
        -> [UInt8]
    {
        let members =
            messageMembers(seq: seq, reason: reason, scope: scope, hint: hint, mandatory: mandatory)
            + [("jitter_ms", .number(Double(jitter)))]
        return ServerMessage.frame(ServerMessage.object(members))
    }

    /// The `sync` message's members but `jitter_ms`, in order: what a socket and a silent push
    /// (`PushPayload`) both carry, so the app reads one shape.
    static func messageMembers(seq: Int, reason: String, scope: String, hint: JSONValue?, mandatory: Bool)
        -> [(String, JSONValue)]
    {
        var members: [(String, JSONValue)] = [
            ("type", .string("sync")), ("id", .string("s-\(seq)")), ("seq", .number(Double(seq))),
            ("reason", .string(reason)), ("scope", .string(scope)),
        ]
        if let hint { members.append(("hint", hint)) }
        if mandatory { members.append(("mandatory", .bool(true))) }
        return members
    }

    /// The frame for this sync standing for a collapsed group: mandatory if any of them was.
    func frame(mandatory groupMandatory: Bool) -> [UInt8] {
        groupMandatory == mandatory
            ? frame
            : Sync.frame(
                seq: seq, reason: reason, scope: scope, hint: hint, mandatory: groupMandatory,
                jitter: jitterMilliseconds)
    }

    var json: JSONValue {
        var members: JSONObject = [
            "seq": .number(Double(seq)), "target": target.json, "reason": .string(reason), "scope": .string(scope),
            "hint": hint ?? .null, "collapse": collapse.map(JSONValue.string) ?? .null, "mandatory": .bool(mandatory),
            "created_at": .number(Double(createdAt)), "expires_at": .number(Double(expiresAt)),
            "spread_ms": .number(Double(spreadMilliseconds)), "jitter_ms": .number(Double(jitterMilliseconds)),
        ]
        // Only when set: a record without it is what a hub before pushes wrote, and reads the same.
        if push != .none { members["push"] = .string(push.rawValue) }
        return .object(members)
    }
}

/// A sync's receipts as numbers (DESIGN §5), one hub's or summed over hubs (DESIGN §11).
struct ReceiptCounts: Equatable, Sendable {
    var targetedOnline = 0
    var delivered = 0
    var acked = 0
    var pushed = 0
    var pushFailed = 0

    static func + (a: ReceiptCounts, b: ReceiptCounts) -> ReceiptCounts {
        // Wrapping: the counts come from other hubs, and a bad one must not trap this one.
        ReceiptCounts(
            targetedOnline: a.targetedOnline &+ b.targetedOnline, delivered: a.delivered &+ b.delivered,
            acked: a.acked &+ b.acked, pushed: a.pushed &+ b.pushed, pushFailed: a.pushFailed &+ b.pushFailed)
    }

    var json: JSONValue {
        .object([
            "targeted_online": .number(Double(targetedOnline)), "delivered": .number(Double(delivered)),
            "acked": .number(Double(acked)), "pushed": .number(Double(pushed)),
            "push_failed": .number(Double(pushFailed)),
        ])
    }
}
