import Foundation
import PushHub

/// `hubctl screen publish | get | list | delete | diff | history | rollback | release` (DESIGN §8, §15).
enum Screen: Command {
    static let name = "screen"
    static let abstract =
        "Publish, read, list, delete, diff (dry run), list history of, roll back screens; start a staged release."
    static let usage = """
        hubctl screen publish NAME FILE|- [--message TEXT]
                      | get NAME [--user U | --device D] [--platform P] [--app-version V] [--components LIST]
                      | list | delete NAME | diff NAME FILE|- | diff NAME --from V1 [--to V2] | history NAME
                      | rollback NAME [--to VERSION] [--message TEXT]
                      | release NAME FILE|- [--qa-cohort C] [--percent P] [--max-error-rate R] [--min-units N]
                                [--message TEXT] [--dry-run]
        """
    static let options: [(String, String)] = [
        ("--user U", "get: the tree user U receives (its experiment variants)"),
        ("--device D", "get: the tree an anonymous device D receives"),
        ("--platform P", "get: the client's platform (experiment audiences, its components profile)"),
        ("--app-version V", "get: the tree as a client of app version V sees it"),
        (
            "--components LIST",
            "get: as a client that declared it renders these (Carousel:2,Text:1); default: the profile of "
                + "--platform/--app-version (hubctl app components)"
        ),
        ("--from V1", "diff: from kept version V1 (instead of a FILE)"),
        ("--to VERSION", "diff: to kept version (default current); rollback: the version to republish"),
        ("--message TEXT", "publish, rollback, release: why, shown by history (one line, at most 500 characters)"),
        ("--qa-cohort C", "release: a cohort that always gets the candidate (the testers)"),
        ("--percent P", "release: the share of the other units that get it, 0 to 100 (default 0: the QA cohort only)"),
        ("--max-error-rate R", "release: the guard halts it above this share of render errors, 0 to 1 (default 0.02)"),
        ("--min-units N", "release: the guard acts only once N units have reported (default 50)"),
        ("--dry-run", "release: only count the connected subscribers who would get the candidate"),
    ]
    static let subcommands: [(String, String)] = [
        ("publish", "Publish FILE (a JSON tree) as the next version of NAME."),
        ("get", "Print the current tree of NAME as a client sees it."),
        ("list", "List the screens with their versions and subscribers."),
        ("delete", "Delete NAME; subscribers get `gone`."),
        ("diff", "Dry run: the patch FILE would produce and who would get it; or --from V1 [--to V2]."),
        ("history", "List the kept versions of NAME: when, hash, author, rollbacks and messages."),
        ("rollback", "Republish an earlier version of NAME as a new version."),
        ("release", "Start a release of FILE as NAME's next version: to the QA cohort and a percent (hubctl release)."),
    ]

    /// The options only `screen release` takes.
    static let releaseOptions = ["--qa-cohort", "--percent", "--max-error-rate", "--min-units", "--dry-run"]

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        let words = Array(arguments.words.dropFirst())
        guard let action = words.first else { return usageError("Missing a screen subcommand.") }
        let rest = Array(words.dropFirst())
        if action != "release", let option = releaseOptions.first(where: { arguments.options[$0] != nil }) {
            return usageError("'screen \(action)' takes no \(option); it is for 'screen release'.")
        }
        switch action {
        case "list":
            return request(client, output, "GET", "/v1/screens") { answer in
                guard let screens = answer["screens"]?.arrayValue else { return }
                if screens.isEmpty { output.print("no screens") }
                let rows = screens.map { screen in
                    [
                        screen["name"]?.stringValue ?? "", "v\(screen["version"]?.intValue ?? 0)",
                        "\(screen["subscribers"]?.intValue ?? 0) subscribers",
                        String((screen["hash"]?.stringValue ?? "").prefix(12)),
                    ]
                }
                output.columns(rows)
            }
        case "diff" where arguments.options["--from"] != nil:
            guard rest.count == 1 else { return usageError("'screen diff NAME --from V1' takes no FILE.") }
            var path = "/v1/screens/\(encode(rest[0]))/diff?from=\(encode(arguments.options["--from"]![0]))"
            if let to = arguments.options["--to"]?.last { path += "&to=\(encode(to))" }
            return request(client, output, "GET", path) { answer in
                output.table([
                    ("screen", rest[0]),
                    ("change", "v\(answer["from"]?.intValue ?? 0) -> v\(answer["to"]?.intValue ?? 0)"),
                ])
                output.print(JSONWriter.string(answer["ops"] ?? .array([])))
            }
        case "publish", "diff":
            guard rest.count == 2 else { return usageError("'screen \(action)' takes NAME FILE.") }
            let body: [UInt8]
            switch InputFile.read(rest[1]) {
            case .success(let bytes): body = bytes
            case .failure(let error): return usageError(error.message)
            }
            var path = "/v1/screens/\(encode(rest[0]))" + (action == "diff" ? "?dry_run=true" : "")
            if let message = arguments.options["--message"]?.last {
                guard action == "publish" else { return usageError("'screen diff' takes no --message.") }
                path += "?message=\(encode(message))"
            }
            return request(client, output, "PUT", path, body: body) { answer in
                if action == "publish" {
                    output.table([
                        ("screen", rest[0]), ("version", "\(answer["version"]?.intValue ?? 0)"),
                        ("hash", answer["hash"]?.stringValue ?? ""),
                        ("renditions", "\(answer["renditions"]?.intValue ?? 0)"),
                        ("sent", "\(answer["sent"]?.intValue ?? 0)"),
                    ])
                } else {
                    let from = answer["from"]?.intValue.map { "v\($0)" } ?? "nothing"
                    output.table([
                        ("screen", rest[0]), ("change", "\(from) -> v\(answer["version"]?.intValue ?? 0)"),
                        (
                            "would send to",
                            "\(answer["would_send"]?.intValue ?? 0) of \(answer["subscribers"]?.intValue ?? 0) subscribers"
                        ),
                        ("renditions", "\(answer["renditions"]?.intValue ?? 0)"),
                    ])
                    ComponentFallbacks.present(answer["components"], output: output)
                    output.print(JSONWriter.string(answer["ops"] ?? .array([])))
                }
            }
        case "get":
            guard rest.count == 1 else { return usageError("'screen get' takes NAME.") }
            var query = [
                ("user", "--user"), ("device", "--device"), ("platform", "--platform"),
                ("app_version", "--app-version"),
            ]
            .compactMap { field, option in arguments.options[option]?.last.map { "\(field)=\(encode($0))" } }
            if let typed = arguments.options["--components"]?.last {
                do {
                    query.append("components=\(encode(try ComponentList(parsing: typed).text))")
                } catch {
                    return usageError("--components: \(error.message)")
                }
            }
            let path = "/v1/screens/\(encode(rest[0]))" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
            return request(client, output, "GET", path) { answer in
                output.table([
                    ("screen", rest[0]), ("version", "\(answer["version"]?.intValue ?? 0)"),
                    ("hash", answer["hash"]?.stringValue ?? ""),
                ])
                output.print(JSONWriter.string(answer["tree"] ?? .null))
            }
        case "delete":
            guard rest.count == 1 else { return usageError("'screen delete' takes NAME.") }
            return request(client, output, "DELETE", "/v1/screens/\(encode(rest[0]))") { answer in
                output.table([
                    ("deleted", rest[0]), ("last version", "\(answer["last_version"]?.intValue ?? 0)"),
                    ("sent gone", "\(answer["sent"]?.intValue ?? 0)"),
                ])
            }
        case "history":
            guard rest.count == 1 else { return usageError("'screen history' takes NAME.") }
            return request(client, output, "GET", "/v1/screens/\(encode(rest[0]))/history") { answer in
                output.columns((answer["versions"]?.arrayValue ?? []).map(Self.historyRow))
            }
        case "rollback":
            guard rest.count == 1 else { return usageError("'screen rollback' takes NAME [--to VERSION].") }
            var body = JSONObject()
            if let text = arguments.options["--to"]?.last {
                guard let version = Int(text) else { return usageError("--to wants a version number, not '\(text)'.") }
                body["to"] = .number(Double(version))
            }
            if let message = arguments.options["--message"]?.last { body["message"] = .string(message) }
            return request(
                client, output, "POST", "/v1/screens/\(encode(rest[0]))/rollback", body: JSONWriter.write(.object(body))
            ) { answer in
                if answer["unchanged"] == .bool(true) {
                    let version = answer["version"]?.intValue ?? 0
                    return output.table([
                        ("screen", rest[0]), ("version", "\(version) (unchanged: it already has that tree)"),
                        ("sent", "0"),
                    ])
                }
                output.table([
                    ("screen", rest[0]), ("version", "\(answer["version"]?.intValue ?? 0)"),
                    ("hash", answer["hash"]?.stringValue ?? ""),
                    ("sent", "\(answer["sent"]?.intValue ?? 0)"),
                ])
            }
        case "release":
            return release(rest, arguments, client: client, output: output)
        default:
            return usageError("Unknown screen subcommand '\(action)'.")
        }
    }

    /// One `history` line: version, time, hash, author (`-`: not recorded), then the rollback
    /// mark and the message.
    static func historyRow(_ entry: JSONValue) -> [String] {
        var note: [String] = []
        if let target = entry["rollback_of"]?.intValue { note.append("(rollback of v\(target))") }
        if let message = entry["message"]?.stringValue { note.append(message) }
        return [
            "v\(entry["version"]?.intValue ?? 0)", time(entry["published_at"]?.intValue ?? 0),
            String((entry["hash"]?.stringValue ?? "").prefix(12)), entry["author"]?.stringValue ?? "-",
            note.joined(separator: " "),
        ]
    }

    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(
            withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "?&=#+"))) ?? text
    }

    static func time(_ milliseconds: Int) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}

/// Sends a request; prints the answer with `present` (or as JSON with --json); maps failures
/// to exit codes.
func request(
    _ client: AdminClient, _ output: Output, _ method: String, _ path: String, body: [UInt8] = [],
    present: (JSONValue) -> Void
) -> Int32 {
    switch fetch(client, output, method, path, body: body) {
    case .success(let json):
        if output.json { output.print(JSONWriter.string(json)) } else { present(json) }
        return ExitCode.success
    case .failure(let failure):
        return failure.exitCode
    }
}

/// Sends a request and answers the hub's JSON when it succeeded; otherwise prints why on stderr
/// and answers the exit code (1 the hub refused or answered no JSON, 3 unreachable). Prints
/// nothing on success, whatever `--json` says: for a lookup before the command's own request.
func fetch(
    _ client: AdminClient, _ output: Output, _ method: String, _ path: String, body: [UInt8] = []
) -> Result<JSONValue, RequestFailure> {
    let answer: AdminClient.Answer
    do {
        answer = try client.send(method, path, body: body)
    } catch {
        output.error(error.description)
        return .failure(RequestFailure(exitCode: ExitCode.unreachable))
    }
    guard (200..<300).contains(answer.status) else {
        let refusal = HubRefusal(answer)
        output.error(refusal.text)
        return .failure(RequestFailure(exitCode: ExitCode.refused, code: refusal.code))
    }
    guard let json = try? JSONReader.parse(answer.body, maxDepth: JSONReader.envelopeMaxDepth) else {
        output.error("the hub answered something that is not JSON")
        return .failure(RequestFailure(exitCode: ExitCode.refused))
    }
    return .success(json)
}

/// A request that failed after its reason was printed: the exit code the command returns, and
/// the hub's error code when it refused (for a command's hint on what to do next).
struct RequestFailure: Error {
    var exitCode: Int32
    var code: String? = nil
}
