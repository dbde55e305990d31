import Foundation

/// One hubctl command: its name, a one-line abstract, its usage and how it runs.
///
/// Invariant: `run` returns the process exit code (DESIGN §8: 0 success, 1 the hub refused,
/// 2 usage, 3 cannot reach the hub).
protocol Command {
    static var name: String { get }
    static var abstract: String { get }
    static var usage: String { get }
    static var options: [(String, String)] { get }
    /// For commands with subcommands: their names and abstracts (printed under SUBCOMMANDS:).
    static var subcommands: [(String, String)] { get }
    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32
}

extension Command {
    static var subcommands: [(String, String)] { [] }

    /// What the parser accepts, read from the help rows so the two cannot disagree: `--user U`
    /// takes a value, `--all` does not, and "(repeatable" in the description allows repeats.
    static var acceptedOptions: [CommandOption] {
        options.map { row in
            let parts = row.0.split(separator: " ", maxSplits: 1)
            return CommandOption(
                name: String(parts[0]), takesValue: parts.count > 1, repeatable: row.1.contains("(repeatable"))
        }
    }

    /// Prints a usage error with this command's usage to stderr; returns exit code 2.
    static func usageError(_ message: String) -> Int32 {
        FileHandle.standardError.write(
            Data("Error: \(message)\nUsage: \(usage)\n  See 'hubctl \(name) --help' for more information.\n".utf8))
        return ExitCode.usage
    }

    static var help: String {
        var text = "OVERVIEW: \(abstract)\n\nUSAGE: \(usage)\n\nOPTIONS:\n"
        let rows =
            options + [
                ("--url URL", "admin API address (env HUBCTL_URL; default http://127.0.0.1:8081)"),
                ("--token TOKEN", "admin token (env HUBCTL_TOKEN; default: ./data/admin.token if readable)"),
                ("--json", "print JSON"), ("-h, --help", "show this help"),
            ]
        let width = rows.map(\.0.count).max() ?? 0
        for (name, text_) in rows {
            text += "  " + name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + text_ + "\n"
        }
        if !subcommands.isEmpty {
            text += "\nSUBCOMMANDS:\n"
            let width = subcommands.map(\.0.count).max() ?? 0
            for (name, abstract) in subcommands {
                text += "  " + name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + abstract + "\n"
            }
        }
        return text
    }
}

/// Exit codes (DESIGN §8).
enum ExitCode {
    static let success: Int32 = 0
    static let refused: Int32 = 1
    static let usage: Int32 = 2
    static let unreachable: Int32 = 3
}
