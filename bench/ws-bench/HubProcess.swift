import Foundation
import PushHub

/// A `pushhub` child process on loopback for a benchmark run.
final class HubProcess {
    let process = Process()
    let client: SocketAddress
    let admin: SocketAddress
    let data: String
    let logPath: String

    init(loops: Int, environment extra: [String: String] = [:], extraArguments: [String] = []) throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "pushhub"
        ).path
        data = NSTemporaryDirectory() + "pushhub-bench-\(UUID().uuidString)"
        let log = data + ".log"
        logPath = log
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments =
            [
                "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--data", data, "--echo-path", "/echo",
                "--loops", String(loops), "--log-level", "warning", "--idle-timeout", "10m", "--ping-interval", "10m",
                "--hello-timeout", "10m",
            ] + extraArguments
        process.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.contains("\"listening\"") }),
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let client = (object["client"] as? String).flatMap(SocketAddress.init(parsing:)),
                let admin = (object["admin"] as? String).flatMap(SocketAddress.init(parsing:))
            {
                self.client = client
                self.admin = admin
                return
            }
            usleep(20_000)
        }
        process.terminate()
        throw BenchError("pushhub did not start; see \(log)")
    }

    /// Resident set size of the hub, from /proc.
    var residentBytes: Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
    }

    /// CPU time (user + system) the hub has used, in seconds, from /proc.
    var cpuSeconds: Double {
        let stat = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)) ?? ""
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// SIGTERM, then wait for the exit (the hub drains and exits 0).
    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: data)
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
