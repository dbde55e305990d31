import Foundation
import PushHub

/// `hubctl cohort set NAME (--users-file F | --rule JSON) | list | show NAME | delete NAME`.
enum CohortCommand: Command {
    static let name = "cohort"
    static let abstract = "Define, list, show and delete cohorts."
    static let usage = "hubctl cohort set NAME (--users-file F | --rule JSON) | list | show NAME | delete NAME"
    static let options: [(String, String)] = [
        ("--users-file F", "set: the members, one user id per line (sent in batches of 100,000)"),
        ("--rule JSON", "set: e.g. '{\"platform\":\"ios\",\"app_version\":\">=5.0.0\",\"claims\":{\"plan\":\"pro\"}}'"),
    ]
    static let subcommands: [(String, String)] = [
        ("set", "Create or replace a cohort from a users file and/or a rule."),
        ("list", "List cohorts with their sizes."),
        ("show", "Show a cohort's size, rule and first members."), ("delete", "Delete a cohort."),
    ]
    static let batch = 100_000

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        let words = Array(arguments.words.dropFirst())
        switch (words.first, words.count) {
        case ("list", 1):
            return request(client, output, "GET", "/v1/cohorts") { answer in
                let rows = (answer["cohorts"]?.arrayValue ?? []).map { cohort in
                    [
                        cohort["name"]?.stringValue ?? "", "\(cohort["users"]?.intValue ?? 0) users",
                        cohort["rule"] == .bool(true) ? "rule" : "",
                    ]
                }
                if rows.isEmpty { output.print("no cohorts") }
                output.columns(rows)
            }
        case ("show", 2):
            return request(client, output, "GET", "/v1/cohorts/\(words[1])") { answer in
                output.table([
                    ("cohort", words[1]), ("users", "\(answer["users"]?.intValue ?? 0)"),
                    ("rule", JSONWriter.string(answer["rule"] ?? .null)),
                    (
                        "first members",
                        (answer["sample"]?.arrayValue ?? []).compactMap(\.stringValue).prefix(10).joined(separator: " ")
                    ),
                ])
            }
        case ("delete", 2):
            return request(client, output, "DELETE", "/v1/cohorts/\(words[1])") { _ in
                output.print("deleted \(words[1])")
            }
        case ("set", 2):
            var users: [String] = []
            if let file = arguments.options["--users-file"]?.last {
                switch readIDs(file) {
                case .success(let ids): users = ids
                case .failure(let error): return usageError(error.message)
                }
            }
            var rule: JSONValue = .null
            if let text = arguments.options["--rule"]?.last {
                guard let parsed = try? JSONReader.parse(text) else { return usageError("--rule wants a JSON object") }
                rule = parsed
            }
            guard arguments.options["--users-file"] != nil || rule != .null else {
                return usageError("'cohort set' needs --users-file or --rule.")
            }
            // The first batch replaces the cohort; the rest are added, so any size fits the body limit.
            let first = Array(users.prefix(batch))
            let status = request(
                client, output, "PUT", "/v1/cohorts/\(words[1])",
                body: JSONWriter.write(.object(["users": .array(first.map(JSONValue.string)), "rule": rule]))
            ) { _ in }
            guard status == ExitCode.success else { return status }
            var start = batch
            while start < users.count {
                let chunk = users[start..<min(start + batch, users.count)]
                let status = request(
                    client, output, "POST", "/v1/cohorts/\(words[1])/users",
                    body: JSONWriter.write(.object(["add": .array(chunk.map(JSONValue.string))]))
                ) { _ in }
                guard status == ExitCode.success else { return status }
                start += batch
            }
            return request(client, output, "GET", "/v1/cohorts/\(words[1])") { answer in
                output.table([
                    ("cohort", words[1]), ("users", "\(answer["users"]?.intValue ?? 0)"),
                    ("rule", JSONWriter.string(answer["rule"] ?? .null)),
                ])
            }
        default:
            return usageError("Unknown or incomplete cohort subcommand.")
        }
    }
}
