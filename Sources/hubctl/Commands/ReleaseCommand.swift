import Foundation
import PushHub

/// `hubctl release list NAME | status NAME [ID] | percent NAME P [ID] [--dry-run] | promote NAME [ID] |
/// halt NAME --reason TEXT [ID]`: follow and steer a screen's release (DESIGN §15), started with
/// `hubctl screen release`. Without an ID, `status` shows the rolling release, else the newest; the
/// others act on the rolling one.
enum ReleaseCommand: Command {
    static let name = "release"
    static let abstract = "List, show, widen, promote and halt a screen's staged releases (start one: screen release)."
    static let usage = """
        hubctl release list NAME | status NAME [ID] | percent NAME P [ID] [--dry-run] | promote NAME [ID]
                       | halt NAME --reason TEXT [ID]
        """
    static let options: [(String, String)] = [
        ("--dry-run", "percent: only count the connected clients it would expose, and how many newly"),
        ("--reason TEXT", "halt: why (one line; kept in the release's steps and the audit log)"),
    ]
    static let subcommands: [(String, String)] = [
        ("list", "List NAME's releases, newest first, with their health."),
        ("status", "Show a release (default: the rolling one, else the newest): health, guard, halt, steps, errors."),
        ("percent", "Raise the rolling release's percent (only upward); --dry-run counts who it would newly expose."),
        ("promote", "Give the candidate to everyone: it becomes NAME's version."),
        ("halt", "Stop the release: the exposed clients go back to the base tree (as a new version)."),
    ]

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        let words = Array(arguments.words.dropFirst())
        if let action = words.first, action != "percent", arguments.options["--dry-run"] != nil {
            return usageError("'release \(action)' takes no --dry-run; it is for 'release percent'.")
        }
        if let action = words.first, action != "halt", arguments.options["--reason"] != nil {
            return usageError("'release \(action)' takes no --reason; it is for 'release halt'.")
        }
        switch (words.first, words.count) {
        case ("list", 2):
            return request(client, output, "GET", releasesPath(words[1])) { answer in
                let releases = answer["releases"]?.arrayValue ?? []
                if releases.isEmpty { output.print("\(words[1]) has no releases") }
                output.columns(releases.map(ReleaseReport.listRow))
            }
        case ("status", 2), ("status", 3):
            let id: String
            switch releaseID(of: words[1], given: words.count == 3 ? words[2] : nil, rollingOnly: false, client, output)
            {
            case .success(let found): id = found
            case .failure(let failure): return failure.exitCode
            }
            return request(client, output, "GET", releasePath(words[1], id)) { answer in
                ReleaseReport.present(answer, output: output)
            }
        case ("percent", 3), ("percent", 4):
            guard let target = percent(from: words[2]) else {
                return usageError("'release percent' wants P, a number from 0 to 100, not '\(words[2])'.")
            }
            return raise(words[1], to: target, id: words.count == 4 ? words[3] : nil, arguments, client, output)
        case ("promote", 2), ("promote", 3):
            return act(on: words[1], id: words.count == 3 ? words[2] : nil, "promote", body: [:], client, output)
        case ("halt", 2), ("halt", 3):
            guard let reason = arguments.options["--reason"]?.last,
                !reason.trimmingCharacters(in: .whitespaces).isEmpty
            else {
                return usageError("'release halt' needs --reason TEXT: why it stops, kept in the release's steps.")
            }
            return act(
                on: words[1], id: words.count == 3 ? words[2] : nil, "halt", body: ["reason": .string(reason)], client,
                output)
        case (nil, _):
            return usageError("Missing a release subcommand.")
        case (let action?, _):
            return usageError("'release \(action)' takes \(operands(of: action)).")
        }
    }

    /// `release percent NAME P [ID] [--dry-run]`: the dry run prints how many connected clients
    /// the percent would expose, and how many of them newly.
    private static func raise(
        _ screen: String, to percent: Double, id given: String?, _ arguments: Arguments, _ client: AdminClient,
        _ output: Output
    ) -> Int32 {
        guard arguments.options["--dry-run"] != nil else {
            return act(on: screen, id: given, "percent", body: ["percent": .number(percent)], client, output)
        }
        let id: String
        switch releaseID(of: screen, given: given, rollingOnly: true, client, output) {
        case .success(let found): id = found
        case .failure(let failure): return failure.exitCode
        }
        let path = releasePath(screen, id) + "/percent?dry_run=true"
        let body = JSONWriter.write(.object(["percent": .number(percent)]))
        return request(client, output, "POST", path, body: body) { answer in
            let subscribers = answer["subscribers"]?.intValue ?? 0
            output.table([
                ("release", id), ("percent", ReleaseReport.percent(answer["percent"]) + " (dry run: nothing changed)"),
                ("would expose", "\(answer["would_expose"]?.intValue ?? 0) of \(subscribers) connected subscribers"),
                ("newly exposed", "\(answer["newly_exposed"]?.intValue ?? 0)"),
            ])
        }
    }

    /// POSTs `action` (percent, promote, halt) to the release and shows the release it answers,
    /// with how many connected clients were sent something.
    private static func act(
        on screen: String, id given: String?, _ action: String, body: JSONObject, _ client: AdminClient,
        _ output: Output
    ) -> Int32 {
        let id: String
        switch releaseID(of: screen, given: given, rollingOnly: true, client, output) {
        case .success(let found): id = found
        case .failure(let failure): return failure.exitCode
        }
        let path = releasePath(screen, id) + "/" + action
        return request(client, output, "POST", path, body: JSONWriter.write(.object(body))) { answer in
            ReleaseReport.present(answer, output: output, extra: [ReleaseReport.sent(answer)])
        }
    }

    /// The release a subcommand means: `given` when there is one; else the screen's rolling
    /// release, or (unless `rollingOnly`) its newest. None is a refusal (exit 1) that says so.
    private static func releaseID(
        of screen: String, given: String?, rollingOnly: Bool, _ client: AdminClient, _ output: Output
    ) -> Result<String, RequestFailure> {
        if let given { return .success(given) }
        return fetch(client, output, "GET", releasesPath(screen)).flatMap { answer in
            let releases = answer["releases"]?.arrayValue ?? []
            let rolling = releases.first { $0["status"]?.stringValue == "rolling" }
            if let id = (rolling ?? (rollingOnly ? nil : releases.first))?["release"]?.stringValue {
                return .success(id)
            }
            if let newest = releases.first {
                let id = newest["release"]?.stringValue ?? "-"
                output.error(
                    "\(screen) has no rolling release (the newest, \(id), is \(newest["status"]?.stringValue ?? "-")); "
                        + "start one with 'hubctl screen release'")
            } else {
                output.error("\(screen) has no releases; start one with 'hubctl screen release \(screen) FILE'")
            }
            return .failure(RequestFailure(exitCode: ExitCode.refused))
        }
    }

    /// A percent as typed: `10`, `0.5`, `10%`. Nil when it is not a finite number (the hub checks
    /// the range: 0 to 100).
    static func percent(from text: String) -> Double? {
        let number = text.hasSuffix("%") ? String(text.dropLast()).trimmingCharacters(in: .whitespaces) : text
        guard let value = Double(number), value.isFinite else { return nil }
        return value
    }

    /// `/v1/screens/{name}/releases`.
    static func releasesPath(_ screen: String) -> String { "/v1/screens/\(Screen.encode(screen))/releases" }

    private static func releasePath(_ screen: String, _ id: String) -> String {
        releasesPath(screen) + "/" + Screen.encode(id)
    }

    /// What a subcommand takes, for the usage error of a wrong number of arguments.
    private static func operands(of action: String) -> String {
        switch action {
        case "list": "NAME"
        case "status", "promote": "NAME [ID]"
        case "percent": "NAME P [ID] [--dry-run]"
        case "halt": "NAME --reason TEXT [ID]"
        default: "one of list, status, percent, promote, halt"
        }
    }
}
