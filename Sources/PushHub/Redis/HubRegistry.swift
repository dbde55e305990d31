/// The live hubs sharing a Redis (DESIGN §11: hubs register with a heartbeat and leave when they
/// stop). Every `interval` a hub writes its entry and reads everyone's in one script:
///
/// ```
/// pushhub:hubs        sorted set: hub id → when its registration expires (Redis's clock, ms)
/// pushhub:hubs:info   hash: hub id → {"hub":…,"client":…,"admin":…,"started_at":…,"connections":…,…}
/// pushhub:deliverer   string: the hub that does the cluster's once-only work (webhook deliveries),
///                     with a TTL of `leaseMilliseconds`
/// ```
///
/// The same script takes the deliverer lease when no live hub holds it, and renews it for the
/// hub that does; a hub that stops cleanly gives it up. So at most one hub holds it at a time on
/// Redis's clock, and a dead holder's lease passes on within `leaseMilliseconds` and a heartbeat.
///
/// A hub that stops cleanly removes itself; one that dies expires `ttl` after its last
/// heartbeat, and the next heartbeat of any hub deletes it. Redis's clock decides expiry, so hubs
/// whose clocks disagree agree on who is live.
///
/// Invariant: `live` is the list the last successful heartbeat returned (this hub included).
final class HubRegistry {
    static let membersKey = "pushhub:hubs"
    static let infoKey = "pushhub:hubs:info"
    static let interval: UInt64 = 2_000_000_000
    static let ttlMilliseconds = 10_000

    let hubID: String
    private(set) var live: [JSONValue] = []
    static let leaseKey = "pushhub:deliverer"
    static let leaseMilliseconds = 6_000
    /// Until when (monotonic ns) this hub may act as the lease holder: the lease's TTL counted
    /// from when the heartbeat that renewed it was sent, less a second for clocks that drift.
    private(set) var leadsUntil: UInt64 = 0
    /// Called with `live` after each heartbeat that read it.
    var onLive: (([JSONValue]) -> Void)?
    private(set) var nextHeartbeat: UInt64 = 0

    init(hubID: String) { self.hubID = hubID }

    /// The other live hubs' ids.
    var others: [String] { live.compactMap { $0["hub"]?.stringValue }.filter { $0 != hubID } }

    private static let heartbeatScript = """
        local now = redis.call('TIME')
        local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
        redis.call('ZADD', KEYS[1], ms + tonumber(ARGV[3]), ARGV[1])
        redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
        local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ms)
        for _, id in ipairs(dead) do
            redis.call('ZREM', KEYS[1], id)
            redis.call('HDEL', KEYS[2], id)
        end
        local holder = redis.call('GET', KEYS[3])
        if not holder or holder == ARGV[1] or not redis.call('ZSCORE', KEYS[1], holder) then
            redis.call('SET', KEYS[3], ARGV[1], 'PX', tonumber(ARGV[4]))
            holder = ARGV[1]
        end
        local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
        local infos = redis.call('HMGET', KEYS[2], unpack(ids))
        table.insert(infos, 1, holder)
        return infos
        """

    /// Reads the live hubs' entries without registering (a starting hub, before it joins).
    static let liveCommand: RedisCommand = {
        let script = """
            local now = redis.call('TIME')
            local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
            local ids = redis.call('ZRANGEBYSCORE', KEYS[1], ms, '+inf')
            if #ids == 0 then return {} end
            return redis.call('HMGET', KEYS[2], unpack(ids))
            """
        return RedisCommand("EVAL", [script, "2", membersKey, infoKey], label: "EVAL (live hubs)")
    }()

    /// The ids of the hubs live right now (Redis's clock): whom a question must wait for.
    static let liveIDsCommand: RedisCommand = {
        let script = """
            local now = redis.call('TIME')
            return redis.call('ZRANGEBYSCORE', KEYS[1], tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000), '+inf')
            """
        return RedisCommand("EVAL", [script, "1", membersKey], label: "EVAL (live hub ids)")
    }()

    /// The ids in a reply to `liveIDsCommand`.
    static func ids(in reply: RESPValue) -> Set<String>? {
        guard let elements = reply.elements else { return nil }
        return Set(elements.compactMap(\.string))
    }

    /// Sends a heartbeat with `info` when one is due.
    func tick(now: UInt64, link: RedisConnection, info: () -> JSONValue) {
        guard now >= nextHeartbeat, link.isReady else { return }
        nextHeartbeat = now + Self.interval
        let command = RedisCommand(
            "EVAL",
            bytes: [
                Array(Self.heartbeatScript.utf8), Array("3".utf8), Array(Self.membersKey.utf8), Array(Self.infoKey.utf8),
                Array(Self.leaseKey.utf8), Array(hubID.utf8), JSONWriter.write(info()),
                Array(String(Self.ttlMilliseconds).utf8), Array(String(Self.leaseMilliseconds).utf8),
            ], label: "EVAL (hub heartbeat)")
        link.send(command, now: now) { [weak self] result in
            switch result {
            case .success(let reply):
                // An entry that is not JSON (another version's) is left out of the list.
                guard let self else { return }
                let elements = reply.elements ?? []
                self.leadsUntil =
                    elements.first?.string == self.hubID
                    ? now + UInt64(Self.leaseMilliseconds - 1000) * 1_000_000 : 0
                self.live = elements.dropFirst().compactMap {
                    $0.string.flatMap { try? JSONReader.parse(Array($0.utf8)) }
                }
                self.onLive?(self.live)
            case .failure(let error):
                Log.warning("the hub heartbeat failed", [("error", "\(error)")])
            }
        }
    }

    /// Leaves the registry (a clean stop).
    func leave(now: UInt64, link: RedisConnection) {
        link.send(RedisCommand("ZREM", [Self.membersKey, hubID]), now: now) { _ in }
        link.send(RedisCommand("HDEL", [Self.infoKey, hubID]), now: now) { _ in }
        let giveUp = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
        link.send(RedisCommand("EVAL", [giveUp, "1", Self.leaseKey, hubID], label: "EVAL (give up the lease)"), now: now) { _ in }
        leadsUntil = 0
    }
}

@available(*, unavailable)
extension HubRegistry: Sendable {}
