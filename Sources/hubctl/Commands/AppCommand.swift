import Foundation
import PushHub

/// `hubctl app components set PLATFORM VERSION FILE|-|LIST | get PLATFORM VERSION | list |
/// delete PLATFORM VERSION`: app profiles (DESIGN §16) — what the builds of a platform render
/// from a version on, for clients whose hello declares no components (typically set by the app's
/// CI at release time).
enum AppCommand: Command {
    static let name = "app"
    static let abstract = "Set, show, list and delete app profiles: the components each platform's builds render."
    static let usage = """
        hubctl app components set PLATFORM VERSION FILE|-|LIST | get PLATFORM VERSION | list
                              | delete PLATFORM VERSION
        """
    static let options: [(String, String)] = []
    static let subcommands: [(String, String)] = [
        (
            "components set",
            "Set what builds from VERSION on render: FILE or - is {\"components\":{\"Carousel\":1,…}}, "
                + "LIST is Carousel:1,Text:1."
        ),
        ("components get", "Show the profile that applies to that build (the newest at or below VERSION)."),
        ("components list", "List every profile, by platform and version."),
        ("components delete", "Delete the profile registered at exactly VERSION."),
    ]

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        let words = Array(arguments.words.dropFirst())
        guard words.first == "components" else { return usageError("Missing an app subcommand: app components ….") }
        let rest = Array(words.dropFirst())
        switch (rest.first, rest.count) {
        case ("list", 1):
            return request(client, output, "GET", "/v1/apps") { answer in
                let profiles = answer["profiles"]?.arrayValue ?? []
                if profiles.isEmpty { return output.print("no app profiles") }
                output.columns(
                    [["platform", "from version", "components", "updated"]]
                        + profiles.map { profile in
                            [
                                profile["platform"]?.stringValue ?? "-", profile["app_version"]?.stringValue ?? "-",
                                ComponentList.describe(profile["components"]),
                                profile["updated_at"]?.intValue.map(Screen.time) ?? "-",
                            ]
                        })
            }
        case ("get", 3):
            return request(client, output, "GET", path(rest[1], rest[2])) { answer in
                let asked = answer["app_version"]?.stringValue ?? rest[2]
                let registered = answer["profile_version"]?.stringValue ?? asked
                output.table([
                    ("platform", answer["platform"]?.stringValue ?? rest[1]), ("app version", asked),
                    ("profile", registered == asked ? registered : "\(registered) (the newest at or below \(asked))"),
                    ("components", ComponentList.describe(answer["components"])),
                ])
            }
        case ("set", 4):
            let body: [UInt8]
            switch profileBody(rest[3]) {
            case .success(let bytes): body = bytes
            case .failure(let error): return usageError(error.message)
            }
            return request(client, output, "PUT", path(rest[1], rest[2]), body: body) { answer in
                output.table([
                    ("platform", answer["platform"]?.stringValue ?? rest[1]),
                    ("app version", answer["app_version"]?.stringValue ?? rest[2]),
                    ("components", ComponentList.describe(answer["components"])),
                    ("updated", answer["updated_at"]?.intValue.map(Screen.time) ?? "-"), ReleaseReport.sent(answer),
                ])
            }
        case ("delete", 3):
            return request(client, output, "DELETE", path(rest[1], rest[2])) { answer in
                let version = answer["app_version"]?.stringValue ?? rest[2]
                output.table([
                    ("deleted", "\(answer["platform"]?.stringValue ?? rest[1]) \(version)"), ReleaseReport.sent(answer),
                ])
            }
        case (nil, _):
            return usageError("Missing an app components subcommand: set, get, list or delete.")
        case (let action?, _):
            return usageError("'app components \(action)' takes \(operands(of: action)).")
        }
    }

    /// The PUT body from `source`: `-` or a file that exists is read as it is (JSON checked
    /// here, its members by the hub); anything else is a LIST (`Carousel:1,Text:1`).
    static func profileBody(_ source: String) -> Result<[UInt8], UsageError> {
        if source == "-" || FileManager.default.fileExists(atPath: source) {
            return InputFile.read(source).flatMap { bytes in
                (try? JSONReader.parse(bytes)) == nil ? .failure(UsageError("\(source) is not JSON")) : .success(bytes)
            }
        }
        if source.isEmpty {
            return .failure(
                UsageError(
                    "LIST is empty; a build that renders no registered component is {\"components\":{}} (FILE or -)"))
        }
        guard source.contains(":") || source.contains("=") else {
            return .failure(
                UsageError("cannot read \(source): no such file (a LIST names each component: Carousel:1,Text:1)"))
        }
        do {
            let list = try ComponentList(parsing: source)
            return .success(JSONWriter.write(.object(["components": list.json])))
        } catch {
            return .failure(error)
        }
    }

    /// `/v1/apps/{platform}/{version}/components`.
    static func path(_ platform: String, _ version: String) -> String {
        "/v1/apps/\(Screen.encode(platform))/\(Screen.encode(version))/components"
    }

    /// What a subcommand takes, for the usage error of a wrong number of arguments.
    private static func operands(of action: String) -> String {
        switch action {
        case "set": "PLATFORM VERSION FILE|-|LIST"
        case "get", "delete": "PLATFORM VERSION"
        case "list": "nothing"
        default: "one of set, get, list, delete"
        }
    }
}
