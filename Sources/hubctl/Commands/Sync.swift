import Foundation
import PushHub

/// `hubctl sync (--user U | --users-file F | --cohort C | --all) [...]` and `hubctl sync status ID`.
enum SyncCommand: Command {
    static let name = "sync"
    static let abstract = "Send a sync-now notification to a user, users, a cohort or everyone; or show its receipts."
    static let usage = """
        hubctl sync (--user U [--user U2 …] | --users-file F | --cohort C | --all [--yes]) [--platform P]
                    [--app-version RANGE] [--reason R] [--scope S] [--ttl 1h] [--collapse K] [--mandatory]
                    [--spread 30s] [--push offline|always] [--dry-run]
        hubctl sync status ID
        """
    static let options: [(String, String)] = [
        ("--user U", "a user (repeatable: several users)"), ("--users-file F", "users, one id per line"),
        ("--cohort C", "a cohort"), ("--all", "every client (asks for confirmation on a terminal)"),
        ("--yes", "--all: do not ask"),
        ("--platform P", "only this platform"), ("--app-version RANGE", "only these app versions, e.g. \"<5.3.0\""),
        ("--reason R", "why (default sync)"), ("--scope S", "what to refresh (default bundle)"),
        ("--ttl D", "keep for missed clients (default 24h)"),
        ("--collapse K", "collapse key"), ("--mandatory", "the client must apply it before continuing"),
        ("--spread D", "spread delivery over D"),
        ("--push MODE", "also a silent push (APNs/FCM) to the devices offline, or to all targeted (docs/push.md)"),
        ("--dry-run", "only count who would get it"),
    ]

    static let subcommands: [(String, String)] = [
        ("status", "Show a sync's target and receipts: targeted online, delivered, acked, pushed.")
    ]

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        if arguments.words.count >= 2 && arguments.words[1] == "status" {
            guard arguments.words.count == 3 else { return usageError("'sync status' takes ID.") }
            let id = arguments.words[2]
            return request(client, output, "GET", "/v1/syncs/\(id)") { answer in
                let receipts = answer["receipts"]
                output.table([
                    ("sync", id), ("reason", answer["reason"]?.stringValue ?? ""),
                    ("scope", answer["scope"]?.stringValue ?? ""),
                    ("target", JSONWriter.string(answer["target"] ?? .null)),
                    ("mandatory", answer["mandatory"] == .bool(true) ? "yes" : "no"),
                    ("targeted online", "\(receipts?["targeted_online"]?.intValue ?? 0)"),
                    ("delivered", "\(receipts?["delivered"]?.intValue ?? 0)"),
                    ("acked", "\(receipts?["acked"]?.intValue ?? 0)"),
                    ("pushed", "\(receipts?["pushed"]?.intValue ?? 0)"),
                    ("push failed", "\(receipts?["push_failed"]?.intValue ?? 0)"),
                ])
            }
        }
        guard arguments.words.count == 1 else { return usageError("Unexpected argument '\(arguments.words[1])'.") }
        var target = JSONObject()
        var scopes = 0
        if let users = arguments.options["--user"] {
            target[users.count == 1 ? "user" : "users"] =
                users.count == 1 ? .string(users[0]) : .array(users.map(JSONValue.string))
            scopes += 1
        }
        if let file = arguments.options["--users-file"]?.last {
            let users: [String]
            switch readIDs(file) {
            case .success(let ids): users = ids
            case .failure(let error): return usageError(error.message)
            }
            target["users"] = .array(users.map(JSONValue.string))
            scopes += 1
        }
        if let cohort = arguments.options["--cohort"]?.last { target["cohort"] = .string(cohort); scopes += 1 }
        if arguments.options["--all"] != nil { target["all"] = .bool(true); scopes += 1 }
        guard scopes == 1 else { return usageError("Give exactly one of --user, --users-file, --cohort, --all.") }
        if let platform = arguments.options["--platform"]?.last { target["platform"] = .string(platform) }
        if let range = arguments.options["--app-version"]?.last { target["app_version"] = .string(range) }
        var body: JSONObject = ["target": .object(target)]
        for (option, field) in [
            ("--reason", "reason"), ("--scope", "scope"), ("--ttl", "ttl"), ("--collapse", "collapse"),
            ("--spread", "spread"), ("--push", "push"),
        ] {
            if let value = arguments.options[option]?.last { body[field] = .string(value) }
        }
        if arguments.options["--mandatory"] != nil { body["mandatory"] = .bool(true) }
        let dryRun = arguments.options["--dry-run"] != nil
        if dryRun { body["dry_run"] = .bool(true) }
        if target["all"] != nil, !dryRun, arguments.options["--yes"] == nil, isatty(STDIN_FILENO) == 1,
            !confirmSendingToEveryone(client, output, target: target)
        {
            output.error("not sent")
            return ExitCode.refused
        }
        return request(client, output, "POST", "/v1/syncs", body: JSONWriter.write(.object(body))) { answer in
            if dryRun {
                var rows = [
                    ("would reach", "\(answer["targeted_online"]?.intValue ?? 0) connections"),
                    ("users", "\(answer["users"]?.intValue ?? 0)"),
                ]
                if let devices = answer["push_devices"]?.intValue { rows.append(("push devices", "\(devices)")) }
                output.table(rows)
            } else {
                var rows = [
                    ("sync", answer["id"]?.stringValue ?? ""), ("seq", "\(answer["seq"]?.intValue ?? 0)"),
                    ("targeted online", "\(answer["targeted_online"]?.intValue ?? 0)"),
                ]
                if let queued = answer["push_queued"]?.intValue { rows.append(("pushes queued", "\(queued)")) }
                output.table(rows)
            }
        }
    }
}

/// On a terminal, `sync --all` asks first and says how many it would reach now (a dry run);
/// anything but y/yes is a no.
private func confirmSendingToEveryone(_ client: AdminClient, _ output: Output, target: JSONObject) -> Bool {
    let probe = JSONWriter.write(.object(["target": .object(target), "dry_run": .bool(true)]))
    let answer = try? client.send("POST", "/v1/syncs", body: probe)
    let reach = answer.flatMap { $0.status == 200 ? try? JSONReader.parse($0.body) : nil }
    let count = reach?["targeted_online"]?.intValue.map { "\($0) connections online now" } ?? "every client"
    FileHandle.standardError.write(Data("Send this sync to every client (\(count))? [y/N] ".utf8))
    let reply = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
    return reply == "y" || reply == "yes"
}

/// One id per line of `path` (`-`: standard input); blank lines and surrounding spaces ignored.
func readIDs(_ path: String) -> Result<[String], UsageError> {
    InputFile.read(path).map { bytes in
        String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
