import Foundation

// hubctl: the ops CLI over the admin API (DESIGN §8).

let commands: [any Command.Type] = [
    Status.self, Screen.self, SyncCommand.self, CohortCommand.self, ExperimentCommand.self, Clients.self, Watch.self,
    Token.self,
]

let overview = """
    OVERVIEW: Operate a PushHub through its admin API.

    USAGE: hubctl [--url URL] [--token TOKEN] [--json] COMMAND

    OPTIONS:
      --url URL       admin API address (env HUBCTL_URL; default http://127.0.0.1:8081)
      --token TOKEN   admin token (env HUBCTL_TOKEN; default: ./data/admin.token if readable)
      --json          print JSON
      -h, --help      show help

    SUBCOMMANDS:
    \(commands.map { "  " + $0.name.padding(toLength: 10, withPad: " ", startingAt: 0) + $0.abstract }.joined(separator: "\n"))

      See 'hubctl COMMAND --help' for more information on a command.
    """

func usageFailure(_ message: String, usage: String) -> Never {
    FileHandle.standardError.write(
        Data("Error: \(message)\nUsage: \(usage)\n  See 'hubctl --help' for more information.\n".utf8))
    exit(ExitCode.usage)
}

let arguments: Arguments
do {
    arguments = try Arguments(Array(CommandLine.arguments.dropFirst())) { name in
        commands.first { $0.name == name }?.acceptedOptions
    }
} catch {
    usageFailure(error.message, usage: "hubctl [--url URL] [--token TOKEN] [--json] COMMAND")
}
guard let name = arguments.words.first else {
    if arguments.help {
        print(overview)
        exit(ExitCode.success)
    }
    usageFailure("Missing a command.", usage: "hubctl [--url URL] [--token TOKEN] [--json] COMMAND")
}
guard let command = commands.first(where: { $0.name == name }) else {
    usageFailure("Unknown command '\(name)'.", usage: "hubctl [--url URL] [--token TOKEN] [--json] COMMAND")
}
if arguments.help {
    print(command.help)
    exit(ExitCode.success)
}
let environment = ProcessInfo.processInfo.environment
let token =
    arguments.token ?? environment["HUBCTL_TOKEN"]
    ?? (try? String(contentsOfFile: "data/admin.token", encoding: .utf8))?.trimmingCharacters(
        in: .whitespacesAndNewlines)
let client: AdminClient
do {
    client = try AdminClient(url: arguments.url ?? environment["HUBCTL_URL"] ?? "http://127.0.0.1:8081", token: token)
} catch {
    usageFailure(error.message, usage: command.usage)
}
exit(command.run(arguments, client: client, output: Output(json: arguments.json)))
