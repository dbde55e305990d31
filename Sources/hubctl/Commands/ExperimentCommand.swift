import Foundation
import PushHub

/// `hubctl experiment apply FILE | list | show KEY | stop KEY | assign KEY --unit U | results KEY`.
enum ExperimentCommand: Command {
    static let name = "experiment"
    static let abstract = "Apply, list, show, stop experiments; look up an assignment; read exposure results."
    static let usage =
        "hubctl experiment apply FILE | list | show KEY | stop KEY | assign KEY --unit U [--platform P] [--app-version V] | results KEY"
    static let options: [(String, String)] = [
        ("--unit U", "assign: the unit (user id, or device for anonymous clients)"),
        ("--platform P", "assign: the client's platform (audience)"),
        ("--app-version V", "assign: the client's app version (audience)"),
    ]
    static let subcommands: [(String, String)] = [
        ("apply", "Create or replace the experiment defined in FILE (its \"key\" names it)."),
        ("list", "List experiments."),
        ("show", "Print an experiment's definition."),
        ("stop", "Set an experiment's status to stopped (everyone sees the base tree)."),
        ("assign", "Show the variant a unit gets and why."), ("results", "Exposures served and confirmed per variant."),
    ]

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        let words = Array(arguments.words.dropFirst())
        switch (words.first, words.count) {
        case ("apply", 2):
            guard let data = FileManager.default.contents(atPath: words[1]),
                let json = try? JSONReader.parse(Array(data)),
                let key = json["key"]?.stringValue
            else {
                return usageError("\(words[1]) must be a JSON experiment definition with a \"key\"")
            }
            return request(client, output, "PUT", "/v1/experiments/\(key)", body: Array(data)) { answer in
                output.table([
                    ("experiment", key), ("status", answer["status"]?.stringValue ?? ""),
                    ("screens", (answer["screens"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: " ")),
                ])
            }
        case ("list", 1):
            return request(client, output, "GET", "/v1/experiments") { answer in
                let rows = (answer["experiments"]?.arrayValue ?? []).map { e in
                    [
                        e["key"]?.stringValue ?? "", e["status"]?.stringValue ?? "",
                        (e["variants"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: "/"),
                    ]
                }
                if rows.isEmpty { output.print("no experiments") }
                output.columns(rows)
            }
        case ("show", 2):
            return request(client, output, "GET", "/v1/experiments/\(words[1])") { answer in
                output.print(JSONWriter.string(answer))
            }
        case ("stop", 2):
            let fetched: AdminClient.Answer
            do { fetched = try client.send("GET", "/v1/experiments/\(words[1])") } catch {
                output.error(error.description)
                return ExitCode.unreachable
            }
            guard fetched.status == 200, case .object(var definition)? = try? JSONReader.parse(fetched.body) else {
                output.error("the hub refused (\(fetched.status)): \(fetched.errorMessage)")
                return ExitCode.refused
            }
            definition["status"] = .string("stopped")
            return request(
                client, output, "PUT", "/v1/experiments/\(words[1])", body: JSONWriter.write(.object(definition))
            ) { _ in
                output.print("stopped \(words[1])")
            }
        case ("assign", 2):
            guard let unit = arguments.options["--unit"]?.last else {
                return usageError("'experiment assign' needs --unit U.")
            }
            var path = "/v1/experiments/\(words[1])/assignment?unit=\(Screen.encode(unit))"
            if let platform = arguments.options["--platform"]?.last { path += "&platform=\(Screen.encode(platform))" }
            if let version = arguments.options["--app-version"]?.last {
                path += "&app_version=\(Screen.encode(version))"
            }
            return request(client, output, "GET", path) { answer in
                output.table([
                    ("unit", unit), ("variant", answer["variant"]?.stringValue ?? "(not in the experiment)"),
                    ("reason", answer["reason"]?.stringValue ?? ""),
                ])
            }
        case ("results", 2):
            return request(client, output, "GET", "/v1/experiments/\(words[1])/results") { answer in
                output.print("\(words[1]) (\(answer["status"]?.stringValue ?? ""))")
                output.columns(
                    [["variant", "served", "confirmed"]]
                        + (answer["variants"]?.arrayValue ?? []).map { v in
                            [
                                v["variant"]?.stringValue ?? "", "\(v["served"]?.intValue ?? 0)",
                                "\(v["confirmed"]?.intValue ?? 0)",
                            ]
                        })
            }
        default:
            return usageError("Unknown or incomplete experiment subcommand.")
        }
    }
}
