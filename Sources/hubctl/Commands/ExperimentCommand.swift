import Foundation
import PushHub

/// `hubctl experiment apply FILE | list | show KEY | start KEY | stop KEY | delete KEY | assign KEY --unit U |
/// results KEY`.
enum ExperimentCommand: Command {
    static let name = "experiment"
    static let abstract = "Apply, list, show, stop experiments; look up an assignment; read exposure results."
    static let usage =
        "hubctl experiment apply FILE|- | list | show KEY | start KEY | stop KEY | delete KEY | assign KEY --unit U [--platform P] [--app-version V] | results KEY"
    static let options: [(String, String)] = [
        ("--unit U", "assign: the unit (user id, or device for anonymous clients)"),
        ("--platform P", "assign: the client's platform (audience)"),
        ("--app-version V", "assign: the client's app version (audience)"),
    ]
    static let subcommands: [(String, String)] = [
        ("apply", "Create or replace the experiment defined in FILE (its \"key\" names it)."),
        ("list", "List experiments."),
        ("show", "Print an experiment's definition."),
        ("start", "Set an experiment's status to running (clients get their variants)."),
        ("stop", "Set an experiment's status to stopped (everyone sees the base tree)."),
        ("delete", "Delete an experiment (its screens re-render without it)."),
        ("assign", "Show the variant a unit gets and why."), ("results", "Exposures served and confirmed per variant."),
    ]

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        let words = Array(arguments.words.dropFirst())
        switch (words.first, words.count) {
        case ("apply", 2):
            let data: [UInt8]
            switch InputFile.read(words[1]) {
            case .success(let bytes): data = bytes
            case .failure(let error): return usageError(error.message)
            }
            let json: JSONValue
            do {
                json = try JSONReader.parse(data)
            } catch {
                return usageError("\(words[1]) is not JSON: \(error)")
            }
            guard let key = json["key"]?.stringValue else {
                return usageError("\(words[1]) has no \"key\": an experiment definition names itself")
            }
            return request(client, output, "PUT", "/v1/experiments/\(key)", body: data) { answer in
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
        case ("start", 2), ("stop", 2):
            let status = words[0] == "start" ? "running" : "stopped"
            let body = JSONWriter.write(.object(["status": .string(status)]))
            return request(client, output, "POST", "/v1/experiments/\(Screen.encode(words[1]))/status", body: body) {
                _ in output.print("\(words[1]) is \(status)")
            }
        case ("delete", 2):
            return request(client, output, "DELETE", "/v1/experiments/\(Screen.encode(words[1]))") { _ in
                output.print("deleted \(words[1])")
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
