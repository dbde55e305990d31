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
    /// Options accepted but not listed in help, in the rows' format: old spellings kept working.
    static var hiddenOptions: [(String, String)] { get }
    /// For commands with subcommands: their names and abstracts (printed under SUBCOMMANDS:).
    static var subcommands: [(String, String)] { get }
    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32
}

extension Command {
    static var subcommands: [(String, String)] { [] }
    static var hiddenOptions: [(String, String)] { [] }

    /// What the parser accepts, read from the help rows so the two cannot disagree: `--user U`
    /// takes a value, `--all` does not, and "(repeatable" in the description allows repeats.
    static var acceptedOptions: [CommandOption] {
        (options + hiddenOptions).map { row in
            let parts = row.0.split(separator: " ", maxSplits: 1)
            return CommandOption(
                name: String(parts[0]), takesValue: parts.count > 1, repeatable: row.1.contains("(repeatable"))
        }
    }

    /// The first of `words` (the command path as typed, this command's name first) that names
    /// none of this command's subcommands where one is expected, as a usage error naming the
    /// nearest (`screen publsh`: "Did you mean 'screen publish'?"). Nil when the path is known
    /// so far; what follows a complete subcommand, and the words of a command without
    /// subcommands, are its arguments.
    static func unknownSubcommand(_ words: [String]) -> UsageError? {
        var paths = subcommands.map { $0.0.split(separator: " ").map(String.init) }
        for (depth, word) in words.dropFirst().enumerated() {
            var names: [String] = []
            for path in paths where depth < path.count && !names.contains(path[depth]) { names.append(path[depth]) }
            guard !names.isEmpty else { return nil }
            guard names.contains(word) else { return .unknownCommand(Array(words[...(depth + 1)]), among: names) }
            paths.removeAll { depth >= $0.count || $0[depth] != word }
        }
        return nil
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
                ("--token TOKEN", "admin token (env HUBCTL_TOKEN; default: --data DIR's, then ./data/admin.token)"),
                ("--data DIR", "a hub's data dir: its admin.token and jwt.secret (env HUBCTL_DATA)"),
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
