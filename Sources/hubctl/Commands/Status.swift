import Foundation

/// `hubctl status`: is the hub up, and what is it serving.
enum Status: Command {
    static let name = "status"
    static let abstract = "Show whether the hub is up (GET /healthz) and, with a token, its counters (GET /v1/stats)."
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
        if output.json {
            var object: [String: Any] = ["status": "ok", "url": client.url]
            if !stats.isEmpty { object["stats"] = stats }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            output.print(String(decoding: data, as: UTF8.self))
        } else {
            var rows = [("hub", "ok"), ("url", client.url)]
            for key in stats.keys.sorted() {
                rows.append((key.replacingOccurrences(of: "_", with: " "), "\(stats[key]!)"))
            }
            output.table(rows)
        }
        return ExitCode.success
    }
}
