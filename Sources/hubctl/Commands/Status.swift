import Foundation

/// `hubctl status`: is the hub up, and what is it serving.
enum Status: Command {
    static let name = "status"
    static let abstract =
        "Show whether the hub is up (GET /healthz) and, with a token, its counters (GET /v1/stats) and, scaled out "
        + "over Redis, the hubs of the cluster."
    static let usage = "hubctl [--url URL] [--token TOKEN] [--json] status"
    static let options: [(String, String)] = []

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        let health: AdminClient.Answer
        do {
            health = try client.send("GET", "/healthz")
        } catch {
            output.error(error.description)
            return ExitCode.unreachable
        }
        guard health.status == 200 else {
            output.error("the hub answered \(health.status): \(health.errorMessage)")
            return ExitCode.refused
        }
        // "ok", or "degraded": scaled out and cut off from Redis (clients served, changes refused).
        let healthBody = (try? JSONSerialization.jsonObject(with: Data(health.body))) as? [String: Any]
        let state = healthBody?["status"] as? String ?? "ok"
        var stats: [String: Any] = [:]
        if client.token != nil {
            do {
                let answer = try client.send("GET", "/v1/stats")
                guard answer.status == 200 else {
                    output.error("the hub refused /v1/stats (\(answer.status)): \(answer.errorMessage)")
                    return ExitCode.refused
                }
                stats = (try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]) ?? [:]
            } catch {
                output.error(error.description)
                return ExitCode.unreachable
            }
        }
        let cluster = stats.removeValue(forKey: "cluster") as? [String: Any]
        if output.json {
            var object: [String: Any] = ["status": state, "url": client.url]
            if !stats.isEmpty { object["stats"] = stats }
            if let cluster { object["cluster"] = cluster }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            output.print(String(decoding: data, as: UTF8.self))
        } else {
            var rows = [("hub", state), ("url", client.url)]
            for key in stats.keys.sorted() {
                rows.append((key.replacingOccurrences(of: "_", with: " "), "\(stats[key]!)"))
            }
            if let cluster { rows += clusterRows(cluster) }
            output.table(rows)
        }
        return ExitCode.success
    }

    /// The cluster's rows: the Redis link, then one row per live hub (this one marked).
    static func clusterRows(_ cluster: [String: Any]) -> [(String, String)] {
        let connected = cluster["connected"] as? Bool ?? false
        var rows = [
            ("redis", "\(cluster["redis"] ?? "") (\(connected ? "connected" : "unreachable"))"),
            ("journal entry", "\(cluster["entry"] ?? 0)"),
        ]
        if let error = cluster["error"] as? String { rows.append(("redis error", error)) }
        let me = cluster["hub"] as? String
        let hubs = (cluster["hubs"] as? [[String: Any]] ?? []).sorted { "\($0["hub"] ?? "")" < "\($1["hub"] ?? "")" }
        rows.append(("hubs", "\(hubs.count) live"))
        for hub in hubs {
            let id = hub["hub"] as? String ?? "?"
            rows.append(
                (
                    "  " + id + (id == me ? " (this hub)" : ""),
                    "\(hub["client_listen"] ?? ""), \(hub["connections"] ?? 0) connections, "
                        + "\(hub["subscriptions"] ?? 0) subscriptions, entry \(hub["entry"] ?? 0)"
                ))
        }
        return rows
    }
}
