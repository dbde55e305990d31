import Foundation
import PushHub

/// `hubctl experiment apply FILE | list | show KEY | start KEY | stop KEY | delete KEY | assign KEY --unit U |
/// override KEY --unit U (--variant V | --clear) | preview KEY [--screen S] [--variant V] | results KEY`.
enum ExperimentCommand: Command {
    static let name = "experiment"
    static let abstract =
        "Apply, list, show, stop experiments; look up or override an assignment; preview variants; read results."
    static let usage = """
        hubctl experiment apply FILE|- | list | show KEY | start KEY | stop KEY | delete KEY
                          | assign KEY --unit U [--platform P] [--app-version V]
                          | override KEY --unit U (--variant V | --clear)
                          | preview KEY [--screen S] [--variant V] | results KEY
        """
    static let options: [(String, String)] = [
        ("--unit U", "assign, override: the unit (user id, or device for anonymous clients)"),
        ("--platform P", "assign: the client's platform (audience)"),
        ("--app-version V", "assign: the client's app version (audience)"),
        ("--variant V", "override: the variant the unit gets; preview: only this variant"),
        ("--clear", "override: remove the unit's override (it is assigned by the hash again)"),
        ("--screen S", "preview: only this screen (with --variant: print its tree alone)"),
    ]
    static let subcommands: [(String, String)] = [
        ("apply", "Create or replace the experiment defined in FILE (its \"key\" names it)."),
        ("list", "List experiments."),
        ("show", "Print an experiment's definition."),
        ("start", "Set an experiment's status to running (clients get their variants)."),
        ("stop", "Set an experiment's status to stopped (everyone sees the base tree)."),
        ("delete", "Delete an experiment (its screens re-render without it)."),
        ("assign", "Show the variant a unit gets and why."),
        ("override", "Give a unit a variant whatever its bucket (a tester, a support case), or --clear it."),
        ("preview", "Print each screen the experiment changes as each variant's clients see it now."),
        ("results", "Units served and confirmed per variant, the sample-ratio check, and each goal's rates."),
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
        case ("override", 2):
            return override(words[1], arguments, client: client, output: output)
        case ("preview", 2):
            return preview(words[1], arguments, client: client, output: output)
        case ("results", 2):
            return request(client, output, "GET", "/v1/experiments/\(Screen.encode(words[1]))/results") { answer in
                ExperimentResults.present(words[1], answer, output: output)
            }
        default:
            return usageError("Unknown or incomplete experiment subcommand.")
        }
    }

    /// `override KEY --unit U --variant V` sets the unit's override; `--clear` removes it.
    private static func override(_ key: String, _ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        guard let unit = arguments.options["--unit"]?.last else {
            return usageError("'experiment override' needs --unit U.")
        }
        let variant = arguments.options["--variant"]?.last
        let clear = arguments.options["--clear"] != nil
        guard (variant != nil) != clear else {
            return usageError("'experiment override' takes exactly one of --variant V and --clear.")
        }
        let body = JSONWriter.write(
            .object(["unit": .string(unit), "variant": variant.map(JSONValue.string) ?? .null]))
        return request(client, output, "POST", "/v1/experiments/\(Screen.encode(key))/overrides", body: body) {
            answer in
            if let variant = answer["variant"]?.stringValue ?? variant {
                output.print("\(unit) gets variant \(variant) of \(key) (an override)")
            } else {
                output.print("\(unit) has no override in \(key): the hash assigns it")
            }
        }
    }

    /// `preview KEY [--screen S] [--variant V]`: each screen, each variant's tree (indented JSON);
    /// with both `--screen` and `--variant`, that one tree alone, to save or diff.
    private static func preview(_ key: String, _ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        let screen = arguments.options["--screen"]?.last
        let variant = arguments.options["--variant"]?.last
        let path =
            "/v1/experiments/\(Screen.encode(key))/preview" + (screen.map { "?screen=\(Screen.encode($0))" } ?? "")
        var problem: String?
        let status = request(client, output, "GET", path) { answer in
            let screens = (answer["screens"]?.arrayValue ?? []).filter {
                screen == nil || $0["screen"]?.stringValue == screen
            }
            guard !screens.isEmpty else {
                if let screen {
                    problem = "\(key) changes no screen named \(screen)"
                } else {
                    output.print("\(key) changes no screen")
                }
                return
            }
            var shownAny = false
            for entry in screens {
                let name = entry["screen"]?.stringValue ?? ""
                guard let version = entry["version"]?.intValue else {
                    if screen != nil, variant != nil {
                        problem = "\(name) is not published yet"
                    } else {
                        output.print("\(name): not published yet")
                    }
                    continue
                }
                let renditions = (entry["variants"]?.arrayValue ?? []).filter {
                    variant == nil || $0["variant"]?.stringValue == variant
                }
                guard !renditions.isEmpty else { continue }  // not the variant asked for
                shownAny = true
                if screen != nil, variant != nil {
                    output.print(IndentedJSON.string(renditions[0]["tree"] ?? .null))
                    continue
                }
                output.print("\(name) version \(version)")
                for rendition in renditions {
                    let (named, hash) = (rendition["variant"]?.stringValue ?? "", rendition["hash"]?.stringValue ?? "")
                    output.print("  variant \(named)  hash \(hash)")
                    output.print("  " + IndentedJSON.string(rendition["tree"] ?? .null, indent: "  "))
                }
            }
            if problem == nil, let variant, !shownAny {
                problem = "\(key) has no variant \(variant)\(screen.map { " on \($0)" } ?? "") to preview"
            }
        }
        guard status == ExitCode.success, let problem, !output.json else { return status }
        output.error(problem)
        return ExitCode.refused
    }
}
