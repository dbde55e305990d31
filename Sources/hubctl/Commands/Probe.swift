import Foundation
import PushHub

/// `hubctl probe live|ready [--wait D]`: asks the hub's `/livez` or `/readyz` (no token), for
/// health checks and scripts. Exit 0 when it answers 200, 1 on any other answer (a draining or
/// degraded hub, printing why), 3 when it cannot be reached. With `--wait`, asks again every
/// 250 ms until it answers 200 or D has passed (a rolling restart: `systemctl restart pushhub &&
/// hubctl probe ready --wait 30s`).
enum Probe: Command {
    static let name = "probe"
    static let abstract =
        "Ask whether the hub is alive (GET /livez) or takes new clients (GET /readyz); exit 0 if so, 1 if not, 3 if unreachable."
    static let usage = "hubctl [--url URL] [--json] probe live|ready [--wait D]"
    static let options: [(String, String)] = [
        ("--wait D", "ask again every 250 ms until the answer is 200 or D (e.g. 30s) has passed")
    ]
    static let subcommands: [(String, String)] = [
        ("live", "GET /livez: 200 while the process answers (also while it drains)."),
        ("ready", "GET /readyz: 200 while it takes new clients; 503 while it drains or cannot reach Redis."),
    ]

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        guard arguments.words.count == 2 else { return usageError("Name the probe: live or ready.") }
        let path = arguments.words[1] == "live" ? "/livez" : "/readyz"
        var wait = Duration.zero
        if let text = arguments.options["--wait"]?.last {
            guard let parsed = DurationText.parse(text) else {
                return usageError("--wait wants a duration such as 500ms, 30s or 2m.")
            }
            wait = parsed
        }
        let deadline = ContinuousClock.now + wait
        while true {
            let outcome = ask(path, client: client)
            if outcome.code == ExitCode.success || ContinuousClock.now >= deadline {
                return report(outcome, output: output)
            }
            Thread.sleep(forTimeInterval: 0.25)
        }
    }

    /// One request: the exit code and what to print (the answer's body, or why there was none).
    private static func ask(_ path: String, client: AdminClient) -> (code: Int32, text: String) {
        do {
            let answer = try client.send("GET", path)
            let body = String(decoding: answer.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return (answer.status == 200 ? ExitCode.success : ExitCode.refused, "\(answer.status) \(body)")
        } catch {
            return (ExitCode.unreachable, error.description)
        }
    }

    private static func report(_ outcome: (code: Int32, text: String), output: Output) -> Int32 {
        if outcome.code == ExitCode.success {
            output.print(output.json ? String(outcome.text.drop { $0 != " " }.dropFirst()) : outcome.text)
        } else {
            output.error(outcome.text)
        }
        return outcome.code
    }
}
