import PushHub

/// hubctl's hand-built argument parsing, in the shape swift-argument-parser users know:
/// global options, then a command path, then the command's own options (DESIGN §8, §14).
///
/// Each command declares its options; anything else is a `UsageError` (exit 2) naming the
/// option and the nearest one the command has — `--platfrom ios` once reached every platform.
/// An option after the command is the command's when it declares it, else a global one. A
/// `--name=value` form is accepted; an option the command does not mark repeatable may be given
/// once. The first word that is not an option must name a command: a typo (`snyc`) is reported
/// as an unknown command with the nearest name, before any option the command would not know.
///
/// Invariant: a parsed `Arguments` names a known command (or none) and holds only options that
/// command accepts, each with its value.
struct Arguments {
    var url: String?
    var token: String?
    /// `--data DIR`: a hub's data dir, to read its `admin.token` and `jwt.secret` (`HubSecret`).
    var dataDirectory: String?
    var json = false
    /// `--cacert FILE`: trust this CA (or self-signed certificate) for https:// and wss://.
    var caFile: String?
    /// `--insecure`: skip the certificate check (development certificates only).
    var insecure = false
    var help = false
    var version = false
    /// The command words (`screen`, `publish`, …) and positional arguments, in order.
    var words: [String] = []
    /// The command's options (flags map to ""), values in the order given.
    var options: [String: [String]] = [:]

    static let globalOptions = [
        CommandOption(name: "--url", takesValue: true), CommandOption(name: "--token", takesValue: true),
        CommandOption(name: "--data", takesValue: true), CommandOption(name: "--json", takesValue: false),
        CommandOption(name: "--cacert", takesValue: true), CommandOption(name: "--insecure", takesValue: false),
        CommandOption(name: "--help", takesValue: false), CommandOption(name: "--version", takesValue: false),
    ]

    /// - Parameter commands: every command's name and the options it accepts.
    init(_ raw: [String], commands: [String: [CommandOption]]) throws(UsageError) {
        var index = 0
        var commandOptions: [CommandOption]?
        while index < raw.count {
            var argument = raw[index]
            index += 1
            if argument == "-h" { argument = "--help" }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                if words.isEmpty {
                    guard let known = commands[argument] else {
                        throw .unknownCommand([argument], among: commands.keys.sorted())
                    }
                    commandOptions = known
                }
                words.append(argument)
                continue
            }
            var inline: String?
            if let equals = argument.firstIndex(of: "=") {
                inline = String(argument[argument.index(after: equals)...])
                argument = String(argument[..<equals])
            }
            let declared = commandOptions ?? []
            guard let option = declared.first(where: { $0.name == argument })
                ?? Self.globalOptions.first(where: { $0.name == argument })
            else {
                throw Self.unknown(argument, known: declared + Self.globalOptions, command: words.first)
            }
            var value = ""
            if option.takesValue {
                if let inline {
                    value = inline
                } else {
                    guard index < raw.count else { throw UsageError("Missing value for '\(argument)'.") }
                    value = raw[index]
                    index += 1
                }
            } else if inline != nil {
                throw UsageError("'\(argument)' takes no value.")
            }
            if declared.contains(where: { $0.name == argument }) {
                if options[argument] != nil && !option.repeatable {
                    throw UsageError("'\(argument)' is given twice; it takes one value.")
                }
                options[argument, default: []].append(value)
                continue
            }
            switch argument {
            case "--url": url = value
            case "--token": token = value
            case "--data": dataDirectory = value
            case "--json": json = true
            case "--cacert": caFile = value
            case "--insecure": insecure = true
            case "--version": version = true
            default: help = true
            }
        }
    }

    private static func unknown(_ argument: String, known: [CommandOption], command: String?) -> UsageError {
        let hint = NearestName.suggest(argument, among: known.map(\.name)).map { " Did you mean '\($0)'?" } ?? ""
        return UsageError("Unknown option '\(argument)'\(command.map { " for 'hubctl \($0)'" } ?? "").\(hint)")
    }
}

/// An option a command accepts: whether it takes a value, and whether it may be repeated.
struct CommandOption: Equatable {
    var name: String
    var takesValue: Bool
    var repeatable = false
}

/// A usage error: printed to stderr with the command's usage, exit 2.
struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }

    /// `Unknown command 'snyc'. Did you mean 'sync'?`, `Unknown command 'screen publsh'. Did you
    /// mean 'screen publish'?`: `typed` is the command path as typed, `among` the names its
    /// last word could have been.
    static func unknownCommand(_ typed: [String], among names: [String]) -> UsageError {
        let hint = NearestName.suggest(typed.last ?? "", among: names).map {
            " Did you mean '\((typed.dropLast() + [$0]).joined(separator: " "))'?"
        }
        return UsageError("Unknown command '\(typed.joined(separator: " "))'.\(hint ?? "")")
    }
}
