import CLinux
import Foundation
import Glibc
import PushHub
import WSProtocol

/// Sync figures (the identity issue): one user among `count` signed-in connections, everyone,
/// a 1,000,000-id cohort import, and the replay of 1,000 missed syncs on reconnect.
enum SyncLoad {
    struct Result {
        var oneUserP50: Double, oneUserP99: Double
        var allPerSecond: Double, allP50: Double, allP99: Double
        var importSeconds: Double, importRSSBytes: Int
        var replayMillis: Double
    }

    static func run(hub: HubProcess, count: Int) throws -> Result {
        let secret = Array(
            try String(contentsOfFile: hub.data + "/jwt.secret", encoding: .utf8).trimmingCharacters(
                in: .whitespacesAndNewlines
            ).utf8)
        let admin = try AdminClientLite(hub: hub)
        let expiry = Double(Int(Date().timeIntervalSince1970) + 3600)
        func hello(_ user: String, lastSync: Int? = nil) -> [UInt8] {
            let jwt = JWTVerifier.sign(["sub": .string(user), "exp": .number(expiry)], secret: secret)
            var message: JSONObject = [
                "type": .string("hello"), "protocol": .number(1), "token": .string(jwt), "device": .string("bench"),
            ]
            if let lastSync { message["last_sync"] = .number(Double(lastSync)) }
            return RawConnection.clientText(JSONWriter.string(.object(message)))
        }
        let collector = FrameCollector()
        for i in 0..<count {
            let fd = try RawConnection.openWebSocket(to: hub.client, from: RawConnection.source(i), path: "/v1/connect")
            try RawConnection.writeAll(fd, hello("u\(i)"))
            collector.add(fd)
        }
        func collect(_ expected: Int, timeout: UInt64) -> [UInt64] {
            collector.collect(expected, deadline: MonotonicClock.now() + timeout).arrivals
        }
        guard collect(count, timeout: 60_000_000_000).count == count else {
            throw BenchError("not every client got its welcome")
        }
        // One user among everyone.
        var one = Latencies()
        for round in 0..<200 {
            let start = MonotonicClock.now()
            _ = try admin.send(
                "POST", "/v1/syncs", Array(#"{"target":{"user":"u\#((round * 7919) % count)"},"reason":"bench"}"#.utf8))
            let arrivals = collect(1, timeout: 10_000_000_000)
            guard let arrival = arrivals.first else { throw BenchError("the one-user sync did not arrive") }
            one.add(arrival - start)
        }
        // Everyone.
        var all = Latencies()
        var allNanos: UInt64 = 0
        let rounds = 5
        for _ in 0..<rounds {
            let start = MonotonicClock.now()
            _ = try admin.send("POST", "/v1/syncs", Array(#"{"target":{"all":true},"reason":"bench"}"#.utf8))
            let arrivals = collect(count, timeout: 30_000_000_000)
            guard arrivals.count == count else {
                throw BenchError("only \(arrivals.count) of \(count) got the sync to all")
            }
            for arrival in arrivals { all.add(arrival - start) }
            allNanos += arrivals.max()! - start
        }
        // A 1,000,000-id cohort, in batches of 100,000 as hubctl sends it.
        let rssBefore = hub.residentBytes
        let importStart = MonotonicClock.now()
        for batch in 0..<10 {
            let ids = (batch * 100_000..<(batch + 1) * 100_000).map { "\"user-\($0)\"" }.joined(separator: ",")
            if batch == 0 {
                _ = try admin.send("PUT", "/v1/cohorts/million", Array(#"{"users":[\#(ids)]}"#.utf8))
            } else {
                _ = try admin.send("POST", "/v1/cohorts/million/users", Array(#"{"add":[\#(ids)]}"#.utf8))
            }
        }
        let importSeconds = Double(MonotonicClock.now() - importStart) / 1e9
        usleep(300_000)
        let importRSS = hub.residentBytes - rssBefore
        // 1,000 missed syncs replayed on reconnect.
        var firstMissed = 0
        for n in 0..<1000 {
            let answer = try admin.send(
                "POST", "/v1/syncs", Array(#"{"target":{"user":"offline"},"reason":"missed \#(n)"}"#.utf8))
            if n == 0 { firstMissed = (try JSONReader.parse(answer))["seq"]?.intValue ?? 0 }
        }
        let fd = try RawConnection.openWebSocket(to: hub.client, from: "127.0.0.251", path: "/v1/connect")
        collector.add(fd)
        let replayStart = MonotonicClock.now()
        try RawConnection.writeAll(fd, hello("offline", lastSync: firstMissed - 1))
        let replayed = collect(1001, timeout: 30_000_000_000)  // welcome + 1,000 syncs
        guard replayed.count >= 1001 else { throw BenchError("replayed \(replayed.count - 1) of 1000 syncs") }
        return Result(
            oneUserP50: one.percentile(0.5) / 1000, oneUserP99: one.percentile(0.99) / 1000,
            allPerSecond: Double(count * rounds) / (Double(allNanos) / 1e9), allP50: all.percentile(0.5) / 1000,
            allP99: all.percentile(0.99) / 1000, importSeconds: importSeconds, importRSSBytes: importRSS,
            replayMillis: Double(replayed.max()! - replayStart) / 1e6)
    }
}
