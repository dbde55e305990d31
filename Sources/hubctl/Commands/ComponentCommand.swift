import Foundation
import PushHub

/// `hubctl component put NAME FILE|- [--force] | get NAME | list | delete NAME`: the registry of
/// components (DESIGN §16) — each component's versions with their schemas, and how many connected
/// clients can render each version.
enum ComponentCommand: Command {
    static let name = "component"
    static let abstract = "Register, show, list and delete components: their versions, schemas and who can render them."
    static let usage = "hubctl component put NAME FILE|- [--force] | get NAME | list | delete NAME"
    static let options: [(String, String)] = [
        ("--force", "put: register even when current screens (or release candidates) break it; lists them")
    ]
    static let subcommands: [(String, String)] = [
        ("put", "Register NAME's versions from FILE: {\"versions\":{\"1\":{\"schema\":{…}},…}} (replaces them)."),
        ("get", "Show NAME's versions, the clients that can render each, and their schemas."),
        ("list", "List the components: per version, how many connected clients can render it."),
        ("delete", "Delete NAME: its nodes are no longer judged (they pass through to every client)."),
    ]

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        let words = Array(arguments.words.dropFirst())
        if let action = words.first, action != "put", arguments.options["--force"] != nil {
            return usageError("'component \(action)' takes no --force; it is for 'component put'.")
        }
        switch (words.first, words.count) {
        case ("list", 1):
            return request(client, output, "GET", "/v1/components") { answer in
                let total = answer["clients"]?.intValue ?? 0
                let components = answer["components"]?.arrayValue ?? []
                if components.isEmpty { return output.print("no components registered") }
                output.columns(
                    [["component", "version", "can render it", "connected"]]
                        + components.flatMap { component in
                            (component["versions"]?.arrayValue ?? []).map { version in
                                [
                                    component["name"]?.stringValue ?? "-", count(version["version"]),
                                    count(version["clients"]), "\(total)",
                                ]
                            }
                        })
            }
        case ("get", 2):
            return request(client, output, "GET", path(words[1])) { answer in
                present(answer, output: output)
            }
        case ("put", 3):
            return put(words[1], file: words[2], force: arguments.options["--force"] != nil, client, output)
        case ("delete", 2):
            return request(client, output, "DELETE", path(words[1])) { answer in
                output.table([("deleted", words[1]), ReleaseReport.sent(answer)])
            }
        case (nil, _):
            return usageError("Missing a component subcommand.")
        case (let action?, _):
            return usageError("'component \(action)' takes \(operands(of: action)).")
        }
    }

    /// `component put NAME FILE [--force]`: FILE is the PUT body as it is sent. A refusal because
    /// screens break the new schemas lists them (HubRefusal) and says how to register anyway.
    private static func put(_ name: String, file: String, force: Bool, _ client: AdminClient, _ output: Output)
        -> Int32
    {
        let body: [UInt8]
        switch InputFile.read(file) {
        case .success(let bytes): body = bytes
        case .failure(let error): return usageError(error.message)
        }
        do {
            _ = try JSONReader.parse(body)
        } catch {
            return usageError("\(file) is not JSON: \(error)")
        }
        let path = path(name) + (force ? "?force=true" : "")
        switch fetch(client, output, "PUT", path, body: body) {
        case .success(let answer):
            if output.json { output.print(JSONWriter.string(answer)) } else { present(answer, output: output) }
            return ExitCode.success
        case .failure(let failure):
            if failure.code == "screens_violate" {
                output.note(
                    "Fix those screens first, or register it anyway with --force (they keep their trees; "
                        + "their next publish must match).")
            }
            return failure.exitCode
        }
    }

    /// A component as `get` and `put` answer it: name, versions (with the clients that can render
    /// each, when the answer counts them), when it was updated, how many connected clients were
    /// sent a changed tree (`put`), the screens `put --force` found breaking it, then each
    /// version's schema.
    static func present(_ component: JSONValue, output: Output) {
        let versions = component["versions"]?.objectValue ?? JSONObject()
        let numbers = versions.keys.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }
        output.table(
            [
                ("component", component["name"]?.stringValue ?? "-"),
                ("versions", numbers.joined(separator: ", ")),
                ("updated", component["updated_at"]?.intValue.map(Screen.time) ?? "-"),
            ] + (component["sent"] == nil ? [] : [ReleaseReport.sent(component)]))
        let violations = component["violations"]?.arrayValue ?? []
        if !violations.isEmpty {
            output.print("registered although these screens break it (--force):")
            for line in HubRefusal.screenLines(violations, indent: "  ") { output.print(line) }
        }
        for number in numbers {
            let version = versions[number] ?? .null
            let clients = version["clients"]?.intValue.map {
                ": \($0) connected client\($0 == 1 ? "" : "s") can render it"
            }
            output.print("version \(number)\(clients ?? ""):")
            if let schema = version["schema"] {
                output.print("  " + IndentedJSON.string(schema, indent: "  "))
            } else {
                output.print("  (no schema: any node)")
            }
        }
    }

    /// `/v1/components/{name}`.
    static func path(_ name: String) -> String { "/v1/components/\(Screen.encode(name))" }

    private static func count(_ value: JSONValue?) -> String { value?.intValue.map(String.init) ?? "-" }

    /// What a subcommand takes, for the usage error of a wrong number of arguments.
    private static func operands(of action: String) -> String {
        switch action {
        case "put": "NAME FILE|- [--force]"
        case "get", "delete": "NAME"
        case "list": "nothing"
        default: "one of put, get, list, delete"
        }
    }
}
