import Foundation
import PushHub
import PushHubClient

// hubctl: the ops CLI over the admin API (DESIGN §8).

let commands: [any Command.Type] = [
    Status.self, Screen.self, ReleaseCommand.self, SyncCommand.self, CohortCommand.self, ExperimentCommand.self,
    ComponentCommand.self, AppCommand.self, WebhookCommand.self, Clients.self, Watch.self, Token.self, Probe.self,
]

let globalUsage = "hubctl [--url URL] [--token TOKEN | --data DIR] [--cacert FILE | --insecure] [--json] COMMAND"

let overview = """
    OVERVIEW: Operate a PushHub through its admin API.

    USAGE: \(globalUsage)

    OPTIONS:
      --url URL       admin API address, http:// or https:// (env HUBCTL_URL; default http://127.0.0.1:8081)
      --token TOKEN   admin token (env HUBCTL_TOKEN)
      --data DIR      a hub's data dir: the admin token from DIR/admin.token (env HUBCTL_DATA; or
                      HUBCTL_TOKEN_FILE=FILE), and for 'token' and 'watch --user' the JWT secret from
                      DIR/jwt.secret (or --secret-file, HUBCTL_JWT_SECRET_FILE); default: ./data, then
                      /var/lib/pushhub, when readable
      --cacert FILE   trust this CA or self-signed certificate for https:// and wss:// (env HUBCTL_CACERT;
                      default: the system's CAs)
      --insecure      do not check the hub's certificate (development certificates only)
      --json          print JSON
      --version       print the version and the commit it was built from
      -h, --help      show help

    SUBCOMMANDS:
    \(commands.map { "  " + $0.name.padding(toLength: 11, withPad: " ", startingAt: 0) + $0.abstract }.joined(separator: "\n"))
      help       Show help for hubctl or one command: hubctl help [COMMAND].
      completion Print a completion script: eval "$(hubctl completion bash)" (or zsh).

      See 'hubctl help COMMAND' for more information on a command.
    """

func usageFailure(_ message: String, usage: String = globalUsage) -> Never {
    FileHandle.standardError.write(
        Data("Error: \(message)\nUsage: \(usage)\n  See 'hubctl --help' for more information.\n".utf8))
    exit(ExitCode.usage)
}

@MainActor func command(named name: String) -> (any Command.Type)? { commands.first { $0.name == name } }

/// Every command the parser admits, with its options: the commands, and `help` and `completion`.
let syntax = Dictionary(uniqueKeysWithValues: commands.map { ($0.name, $0.acceptedOptions) })
    .merging(["help": [], "completion": []]) { first, _ in first }

let arguments: Arguments
do {
    arguments = try Arguments(ProcessEnvironment.arguments(), commands: syntax)
} catch {
    usageFailure(error.message)
}
if arguments.version {
    print("hubctl \(BuildInfo.description)")
    exit(ExitCode.success)
}
guard let name = arguments.words.first else {
    if arguments.help {
        print(overview)
        exit(ExitCode.success)
    }
    usageFailure("Missing a command.")
}
switch name {
case "help":
    guard arguments.words.count <= 2 else { usageFailure("'help' takes at most one COMMAND.", usage: "hubctl help [COMMAND]") }
    guard arguments.words.count == 2 else {
        print(overview)
        exit(ExitCode.success)
    }
    guard let helped = command(named: arguments.words[1]) else {
        usageFailure(UsageError.unknownCommand([arguments.words[1]], among: commands.map { $0.name }).message)
    }
    print(helped.help)
    exit(ExitCode.success)
case "completion":
    guard arguments.words.count == 2, let script = Completion.script(for: arguments.words[1], commands: commands) else {
        usageFailure("'completion' takes bash or zsh.", usage: "hubctl completion bash|zsh")
    }
    print(script, terminator: "")
    exit(ExitCode.success)
default:
    break
}
guard let command = command(named: name) else { preconditionFailure("the parser admits only known commands") }
if arguments.help {
    print(command.help)
    exit(ExitCode.success)
}
if let error = command.unknownSubcommand(arguments.words) { exit(command.usageError(error.message)) }
let environment = ProcessInfo.processInfo.environment
let token: String?
switch HubSecret.adminToken.resolve(
    flag: arguments.token, dataDirectory: arguments.dataDirectory, environment: environment)
{
case .success(let found): token = found
case .failure(let error): usageFailure(error.message, usage: command.usage)
}
let client: AdminClient
do {
    let trust: TLSTrust =
        arguments.insecure ? .insecure : (arguments.caFile ?? environment["HUBCTL_CACERT"]).map { .caFile($0) } ?? .system
    client = try AdminClient(
        url: arguments.url ?? environment["HUBCTL_URL"] ?? "http://127.0.0.1:8081", token: token, trust: trust)
} catch {
    usageFailure(error.message, usage: command.usage)
}
exit(command.run(arguments, client: client, output: Output(json: arguments.json)))
