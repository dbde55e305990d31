import Foundation
import PushHub
import WSProtocol

/// `hubctl watch SCREEN [--app-version V]`: connects as a client, prints the snapshot, then
/// applies each patch as it arrives and checks the hash (DESIGN §8).
enum Watch: Command {
    static let name = "watch"
    static let abstract = "Connect as a client and print a screen's snapshot, then each patch live (hash-checked)."
    static let usage =
        "hubctl watch SCREEN [--token T | --user U] [--app-version V] [--ws-url ws://HOST:PORT] [--count N]"
    static let options: [(String, String)] = [
        ("--token T", "sign in with this client token"),
        ("--user U", "sign in as U with a token minted from ./data/jwt.secret (see 'hubctl token')"),
        ("--app-version V", "the app version to present (capability filter)"),
        ("--ws-url URL", "client listener (env HUBCTL_WS_URL; default: the admin host, the hub's client port)"),
        ("--count N", "exit 0 after N updates (snapshot included)"),
    ]

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        guard arguments.words.count == 2 else {
            FileHandle.standardError.write(Data("Error: 'watch' takes SCREEN.\nUsage: \(usage)\n".utf8))
            return ExitCode.usage
        }
        let screen = arguments.words[1]
        let limit = arguments.options["--count"]?.last.flatMap(Int.init)
        let server: SocketAddress
        switch clientAddress(arguments, client: client) {
        case .success(let address): server = address
        case .failure(let error):
            output.error(error.description)
            return ExitCode.unreachable
        }
        let socket: WebSocketClient
        do {
            socket = try WebSocketClient(
                address: server, path: "/v1/connect", subprotocols: ["pushhub.v1"], limits: .echo,
                timeout: .seconds(3600))
            var hello: [String: JSONValue] = [
                "type": .string("hello"), "protocol": .number(1), "device": .string("hubctl-watch"),
            ]
            if let token = arguments.options["--token"]?.last {
                hello["token"] = .string(token)
            } else if let user = arguments.options["--user"]?.last {
                let path = ProcessInfo.processInfo.environment["HUBCTL_JWT_SECRET_FILE"] ?? "data/jwt.secret"
                guard
                    let secret = try? String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(
                        in: .whitespacesAndNewlines)
                else {
                    output.error("cannot read the secret from \(path) to sign in as \(user); pass --token")
                    return ExitCode.usage
                }
                let now = Int(Date().timeIntervalSince1970)
                hello["token"] = .string(
                    JWTVerifier.sign(
                        ["sub": .string(user), "exp": .number(Double(now + 3600))], secret: Array(secret.utf8)))
            }
            if let version = arguments.options["--app-version"]?.last {
                hello["app"] = .object(["platform": .string("hubctl"), "version": .string(version)])
            }
            try socket.sendText(JSONWriter.string(.object(JSONObject(hello))))
            try socket.sendText(JSONWriter.string(.object(["type": .string("subscribe"), "screen": .string(screen)])))
        } catch {
            output.error("cannot connect to ws://\(server)/v1/connect: \(error)")
            return ExitCode.unreachable
        }
        var tree: JSONValue?
        var updates = 0
        while limit.map({ updates < $0 }) ?? true {
            let message: WebSocketClient.Message?
            do { message = try socket.receive() } catch {
                output.error("connection failed: \(error)")
                return ExitCode.unreachable
            }
            guard let message else {
                output.error("the hub closed the connection")
                return ExitCode.unreachable
            }
            guard case .text(let text) = message, let json = try? JSONReader.parse(text) else {
                if case .close(let close) = message {
                    output.error("the hub closed the connection (\(close.code?.rawValue ?? 1005) \(close.reason))")
                    return ExitCode.refused
                }
                continue
            }
            if output.json { output.print(text) }
            switch json["type"]?.stringValue {
            case "welcome": continue
            case "snapshot":
                tree = json["tree"]
                updates += 1
                if !output.json {
                    output.print(
                        "snapshot \(screen) v\(json["version"]?.intValue ?? 0) hash \(json["hash"]?.stringValue ?? "")")
                    output.print(JSONWriter.string(tree ?? .null))
                }
            case "patch":
                updates += 1
                guard let current = tree, let opsJSON = json["ops"], let ops = try? JSONPatch(json: opsJSON),
                    let patched = try? ops.apply(to: current)
                else {
                    output.error("a patch did not apply; resubscribing for a snapshot")
                    tree = nil
                    try? socket.sendText(
                        JSONWriter.string(.object(["type": .string("unsubscribe"), "screen": .string(screen)])))
                    try? socket.sendText(
                        JSONWriter.string(.object(["type": .string("subscribe"), "screen": .string(screen)])))
                    continue
                }
                let hash = ScreenHash.of(patched)
                let verdict = hash == json["hash"]?.stringValue ? "hash ok" : "HASH MISMATCH"
                tree = patched
                if !output.json {
                    output.print(
                        "patch \(screen) v\(json["from"]?.intValue ?? 0) -> v\(json["version"]?.intValue ?? 0): \(ops.operations.count) ops, \(verdict)"
                    )
                    output.print(JSONWriter.string(opsJSON))
                }
                if verdict != "hash ok" {
                    tree = nil
                    try? socket.sendText(
                        JSONWriter.string(.object(["type": .string("unsubscribe"), "screen": .string(screen)])))
                    try? socket.sendText(
                        JSONWriter.string(.object(["type": .string("subscribe"), "screen": .string(screen)])))
                }
            case "gone":
                output.print("gone \(screen)")
                return ExitCode.success
            case "error":
                output.error("\(json["code"]?.stringValue ?? "error"): \(json["message"]?.stringValue ?? "")")
                return ExitCode.refused
            default:
                continue
            }
        }
        try? socket.sendClose()
        return ExitCode.success
    }

    /// The client listener: --ws-url, HUBCTL_WS_URL, or the admin host with the port the hub reports.
    static func clientAddress(_ arguments: Arguments, client: AdminClient) -> Result<
        SocketAddress, AdminClient.Unreachable
    > {
        if let url = arguments.options["--ws-url"]?.last ?? ProcessInfo.processInfo.environment["HUBCTL_WS_URL"] {
            let hostPort =
                url.replacingOccurrences(of: "ws://", with: "").split(separator: "/").first.map(String.init) ?? ""
            guard let address = SocketAddress(parsing: hostPort) else {
                return .failure(AdminClient.Unreachable(description: "--ws-url wants ws://HOST:PORT, not '\(url)'"))
            }
            return .success(address)
        }
        do {
            let answer = try client.send("GET", "/v1/stats")
            guard answer.status == 200, let stats = try? JSONReader.parse(answer.body),
                let listen = stats["client_listen"]?.stringValue, let address = SocketAddress(parsing: listen)
            else {
                return .failure(
                    AdminClient.Unreachable(
                        description: "cannot learn the client port from /v1/stats (\(answer.status)); pass --ws-url"))
            }
            return .success(SocketAddress(host: client.address.host, port: address.port))
        } catch {
            return .failure(error)
        }
    }
}
