import Foundation
import PushHub

/// `hubctl webhook put NAME --url URL --events E,… [--secret S] | list | get NAME | delete NAME |
/// deliveries NAME [--limit N] | test NAME`: the hub's signed webhooks (DESIGN §18) over
/// `/v1/webhooks` — what each sends where, its queue and counters, its recent deliveries, and a
/// test event sent at once.
///
/// `--url` after the command is the receiver's address (a command's own option wins over the
/// global one, `Arguments`); the hub's address goes before the command or in `HUBCTL_URL`.
enum WebhookCommand: Command {
    static let name = "webhook"
    static let abstract = "Create, list, show and delete webhooks; list their deliveries; send a test event."
    static let usage = """
        hubctl webhook put NAME --url URL --events E1,E2,… [--secret S] | list | get NAME | delete NAME
                       | deliveries NAME [--limit N] | test NAME
        """
    static let options: [(String, String)] = [
        ("--url URL", "put: where events are POSTed (https://, or http:// to loopback); the hub's --url goes first"),
        ("--events LIST", "put: event types, comma-separated (screen.published,release.halted,…), or '*' for all"),
        ("--secret S", "put: the signing secret, 16-256 visible ASCII (default: made on create, printed once)"),
        ("--limit N", "deliveries: how many to list, 1 to 1000 (default 50): pending first, then the most recent"),
    ]
    static let subcommands: [(String, String)] = [
        ("put", "Create or replace NAME: its URL, the events it gets and (optionally) its secret."),
        ("list", "List the webhooks with their queues and counters."),
        ("get", "Show NAME: URL, events, queued, delivered, failed, dropped and its last attempt."),
        ("delete", "Delete NAME; the events queued for it are dropped."),
        ("deliveries", "List NAME's deliveries: pending ones in queue order, then the most recent finished."),
        ("test", "Send NAME one webhook.test event now (not queued, not retried); exit 1 unless it answers 2xx."),
    ]

    /// The subcommand each option is for; any other subcommand given it is a usage error.
    static let optionOwners = ["--url": "put", "--events": "put", "--secret": "put", "--limit": "deliveries"]

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        let words = Array(arguments.words.dropFirst())
        if let action = words.first {
            for (option, owner) in optionOwners.sorted(by: { $0.key < $1.key })
            where action != owner && arguments.options[option] != nil {
                // After the command, --url is the receiver's: the hub's address goes before it.
                let hint = option == "--url" ? " The hub's address goes first: hubctl --url URL webhook \(action)." : ""
                return usageError("'webhook \(action)' takes no \(option); it is for 'webhook \(owner)'.\(hint)")
            }
        }
        switch (words.first, words.count) {
        case ("put", 2):
            return put(words[1], arguments, client, output)
        case ("list", 1):
            return request(client, output, "GET", "/v1/webhooks") { answer in
                let webhooks = answer["webhooks"]?.arrayValue ?? []
                if webhooks.isEmpty { return output.print("no webhooks") }
                output.columns(
                    [["webhook", "events", "url", "queued", "delivered", "failed", "dropped", "last status"]]
                        + webhooks.map { webhook in
                            [
                                text(webhook["name"]), events(webhook), text(webhook["url"]), text(webhook["queued"]),
                                text(webhook["delivered"]), text(webhook["failed"]), text(webhook["dropped"]),
                                text(webhook["last_status"]),
                            ]
                        })
            }
        case ("get", 2):
            return request(client, output, "GET", path(words[1])) { answer in present(answer, output: output) }
        case ("delete", 2):
            return request(client, output, "DELETE", path(words[1])) { _ in output.print("deleted \(words[1])") }
        case ("deliveries", 2):
            var path = path(words[1]) + "/deliveries"
            if let limit = arguments.options["--limit"]?.last {
                guard let count = Int(limit), (1...1000).contains(count) else {
                    return usageError("--limit wants a whole number from 1 to 1000, not '\(limit)'.")
                }
                path += "?limit=\(count)"
            }
            return request(client, output, "GET", path) { answer in
                let deliveries = answer["deliveries"]?.arrayValue ?? []
                if deliveries.isEmpty { return output.print("\(words[1]) has no deliveries") }
                output.columns(
                    [["id", "type", "subject", "state", "attempts", "last status", "when", "last error"]]
                        + deliveries.map(deliveryRow))
            }
        case ("test", 2):
            return test(words[1], client, output)
        case (nil, _):
            return usageError("Missing a webhook subcommand.")
        case (let action?, _):
            return usageError("'webhook \(action)' takes \(operands(of: action)).")
        }
    }

    /// `webhook put NAME --url URL --events LIST [--secret S]`: the PUT body from the options. The
    /// hub checks the values (and names the field it refuses); hubctl only needs them given.
    private static func put(_ name: String, _ arguments: Arguments, _ client: AdminClient, _ output: Output) -> Int32 {
        guard let url = arguments.options["--url"]?.last, let list = arguments.options["--events"]?.last else {
            return usageError("'webhook put' needs --url URL and --events LIST.")
        }
        let types = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !types.isEmpty else {
            return usageError("--events wants at least one event type (or '*'), comma-separated.")
        }
        var body: JSONObject = ["url": .string(url), "events": .array(types.map(JSONValue.string))]
        if let secret = arguments.options["--secret"]?.last { body["secret"] = .string(secret) }
        return request(client, output, "PUT", path(name), body: JSONWriter.write(.object(body))) { answer in
            present(answer, output: output)
            if answer["secret"] != nil {
                output.note(
                    "Keep the secret: the hub shows it only in this answer (put NAME again with --secret to "
                        + "replace it).")
            }
        }
    }

    /// `webhook test NAME`: what the receiver answered the test event. The hub sent it either way,
    /// so a receiver that failed is exit 1 with its status or error: a script can check a receiver.
    private static func test(_ name: String, _ client: AdminClient, _ output: Output) -> Int32 {
        switch fetch(client, output, "POST", path(name) + "/test") {
        case .success(let answer):
            if output.json {
                output.print(JSONWriter.string(answer))
            } else {
                output.table([
                    ("event", text(answer["id"])), ("status", text(answer["status"])),
                    ("error", text(answer["error"])), ("duration", text(answer["duration_ms"]) + " ms"),
                ])
            }
            if let status = answer["status"]?.intValue, (200..<300).contains(status) { return ExitCode.success }
            let why = answer["error"]?.stringValue ?? answer["status"]?.intValue.map { "the receiver answered \($0)" }
            output.error("the test event was not delivered: \(why ?? "no answer")")
            return ExitCode.refused
        case .failure(let failure):
            return failure.exitCode
        }
    }

    /// A webhook as `get` and `put` answer it: its definition, then (`get`) its counters and last
    /// attempt, then (`put` on create) the secret the hub made.
    static func present(_ webhook: JSONValue, output: Output) {
        var rows = [
            ("webhook", text(webhook["name"])), ("url", text(webhook["url"])), ("events", events(webhook)),
            ("created", time(webhook["created_at"])), ("updated", time(webhook["updated_at"])),
        ]
        if webhook["queued"] != nil {
            rows += [
                ("queued", text(webhook["queued"])), ("delivered", text(webhook["delivered"])),
                ("failed", text(webhook["failed"])), ("dropped", text(webhook["dropped"])),
                ("last status", text(webhook["last_status"])), ("last error", text(webhook["last_error"])),
                ("last attempt", time(webhook["last_attempt_at"])),
            ]
        }
        if let secret = webhook["secret"]?.stringValue { rows.append(("secret", secret)) }
        output.table(rows)
    }

    /// One line of `deliveries`: when it finished (delivered, failed or dropped), else when it is
    /// tried next.
    static func deliveryRow(_ delivery: JSONValue) -> [String] {
        let when =
            delivery["finished_at"]?.intValue.map { text(delivery["state"]) + " " + Screen.time($0) }
            ?? delivery["next_attempt_at"]?.intValue.map { "next " + Screen.time($0) } ?? "-"
        return [
            text(delivery["id"]), text(delivery["type"]), text(delivery["subject"]), text(delivery["state"]),
            text(delivery["attempts"]), text(delivery["last_status"]), when, text(delivery["last_error"]),
        ]
    }

    /// `/v1/webhooks/{name}`.
    static func path(_ name: String) -> String { "/v1/webhooks/\(Screen.encode(name))" }

    private static func events(_ webhook: JSONValue) -> String {
        (webhook["events"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ",")
    }

    /// A number or string as printed; `-` for null or absent.
    private static func text(_ value: JSONValue?) -> String {
        if let number = value?.intValue { return String(number) }
        return value?.stringValue ?? "-"
    }

    private static func time(_ value: JSONValue?) -> String { value?.intValue.map(Screen.time) ?? "-" }

    /// What a subcommand takes, for the usage error of a wrong number of arguments.
    private static func operands(of action: String) -> String {
        switch action {
        case "put": "NAME --url URL --events LIST [--secret S]"
        case "get", "delete", "test": "NAME"
        case "deliveries": "NAME [--limit N]"
        case "list": "nothing"
        default: "one of put, list, get, delete, deliveries, test"
        }
    }
}
