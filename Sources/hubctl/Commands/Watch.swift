import Foundation
import Glibc
import PushHub
import PushHubClient
import WSProtocol

/// `hubctl watch SCREEN`: a real client of the hub (DESIGN §8). It signs in (`--token`, or
/// `--user` minted from the JWT secret, or anonymously as `--device`), subscribes, prints the
/// snapshot and then each patch as it arrives (hash-checked), prints and acks syncs, answers the
/// hub's pings, and after a drop reconnects with backoff and resumes with `have` and `last_sync`.
/// Every line is flushed as it is printed (a pipe or a file gets it at once).
enum Watch: Command {
    static let name = "watch"
    static let abstract = "Be a client: print a screen's snapshot and each patch live (hash-checked), and syncs."
    static let usage = """
        hubctl watch SCREEN [--token T | --user U] [--device D] [--platform P] [--app-version V]
                     [--ws-url ws://HOST:PORT] [--count N]
        """
    static let options: [(String, String)] = [
        ("--token T", "sign in with this client token"),
        ("--user U", "sign in as U with a token minted from the JWT secret (see 'hubctl token')"),
        ("--device D", "the device id to present (default hubctl-watch)"),
        ("--platform P", "the platform to present (default hubctl)"),
        ("--app-version V", "the app version to present (capability filter)"),
        ("--ws-url URL", "client listener (env HUBCTL_WS_URL; default: the admin host, the hub's client port)"),
        ("--count N", "exit 0 after N updates (snapshot included)"),
    ]

    /// Longest wait between reconnection attempts.
    static let maxBackoff: Duration = .seconds(30)

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        guard arguments.words.count == 2 else { return usageError("'watch' takes SCREEN.") }
        let limit = arguments.options["--count"]?.last.flatMap(Int.init)
        let server: SocketAddress
        switch clientAddress(arguments, client: client) {
        case .success(let address): server = address
        case .failure(let error):
            output.error(error.description)
            return ExitCode.unreachable
        }
        var hello: JSONObject = [
            "type": .string("hello"), "protocol": .number(1),
            "device": .string(arguments.options["--device"]?.last ?? "hubctl-watch"),
            "app": .object([
                "platform": .string(arguments.options["--platform"]?.last ?? "hubctl"),
                "version": .string(arguments.options["--app-version"]?.last ?? "999.0.0"),
            ]),
        ]
        switch signIn(arguments) {
        case .success(let token): if let token { hello["token"] = .string(token) }
        case .failure(let error): return usageError(error.message)
        }
        var watcher = Watcher(screen: arguments.words[1], hello: hello, output: output, limit: limit)
        var backoff: Duration = .milliseconds(500)
        while true {
            switch watcher.session(server) {
            case .finished(let code): return code
            case .dropped(let reason, let wasLive):
                if wasLive { backoff = .milliseconds(500) }
                output.note("disconnected (\(reason)); reconnecting in \(backoff)")
                sleep(for: backoff)
                backoff = min(backoff * 2, maxBackoff)
            }
        }
    }

    /// The client token: `--token`, or one minted for `--user`; nil signs in anonymously.
    private static func signIn(_ arguments: Arguments) -> Result<String?, UsageError> {
        if let token = arguments.options["--token"]?.last { return .success(token) }
        guard let user = arguments.options["--user"]?.last else { return .success(nil) }
        let path = ProcessInfo.processInfo.environment["HUBCTL_JWT_SECRET_FILE"] ?? "data/jwt.secret"
        guard case .success(let bytes) = InputFile.read(path) else {
            return .failure(UsageError("cannot read the secret from \(path) to sign in as \(user); pass --token"))
        }
        let secret = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let now = Int(Date().timeIntervalSince1970)
        return .success(
            JWTVerifier.sign(["sub": .string(user), "exp": .number(Double(now + 24 * 3600))], secret: Array(secret.utf8)))
    }

    private static func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
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

/// One watched screen across connections: the tree held (to resume with `have`), the highest
/// sync seq seen (to resume with `last_sync`), the syncs already printed (deduped by id).
private struct Watcher {
    enum Outcome {
        case finished(Int32)
        /// The connection ended; `wasLive` when it had got as far as a welcome.
        case dropped(String, wasLive: Bool)
    }

    let screen: String
    let hello: JSONObject
    let output: Output
    let limit: Int?
    var tree: JSONValue?
    var version: Int?
    var hash: String?
    var lastSync: Int?
    var seenSyncs = Set<String>()
    var updates = 0

    init(screen: String, hello: JSONObject, output: Output, limit: Int?) {
        self.screen = screen
        self.hello = hello
        self.output = output
        self.limit = limit
    }

    /// Connects, resumes, and handles messages until the connection ends or the watch is done.
    mutating func session(_ server: SocketAddress) -> Outcome {
        let socket: WebSocketClient
        do {
            socket = try WebSocketClient(
                address: server, path: "/v1/connect", subprotocols: ["pushhub.v1"], limits: .echo,
                timeout: .seconds(24 * 3600))
            var greeting = hello
            if let lastSync { greeting["last_sync"] = .number(Double(lastSync)) }
            try socket.sendText(JSONWriter.string(.object(greeting)))
            try subscribe(socket)
        } catch {
            return .dropped("cannot connect to ws://\(server)/v1/connect: \(error)", wasLive: false)
        }
        var live = false
        while limit.map({ updates < $0 }) ?? true {
            let message: WebSocketClient.Message?
            do { message = try socket.receive() } catch { return .dropped("\(error)", wasLive: live) }
            switch message {
            case nil:
                return .dropped("the hub closed the connection", wasLive: live)
            case .ping(let payload)?:
                try? socket.send(.pong, payload)
            case .close(let close)?:
                try? socket.sendClose(close.code ?? .normal)
                if close.code == .policyViolation { return .finished(refused("closed: \(close.reason)")) }
                return .dropped("closed \(close.code?.rawValue ?? 1005) \(close.reason)", wasLive: live)
            case .text(let text)?:
                guard let json = try? JSONReader.parse(text) else { continue }
                if output.json { output.print(text) }
                if json["type"]?.stringValue == "welcome" { live = true }
                if let code = handle(json, socket) { return .finished(code) }
            default:
                continue
            }
        }
        try? socket.sendClose()
        return .finished(ExitCode.success)
    }

    private func subscribe(_ socket: WebSocketClient) throws {
        var message: JSONObject = ["type": .string("subscribe"), "screen": .string(screen)]
        if let version, let hash, tree != nil {
            message["have"] = .object(["version": .number(Double(version)), "hash": .string(hash)])
        }
        try socket.sendText(JSONWriter.string(.object(message)))
    }

    /// One server message; an exit code when the watch is over.
    private mutating func handle(_ json: JSONValue, _ socket: WebSocketClient) -> Int32? {
        switch json["type"]?.stringValue {
        case "snapshot":
            tree = json["tree"]
            hold(json)
            updates += 1
            text("snapshot \(screen) v\(version ?? 0) hash \(hash ?? "")", JSONWriter.string(tree ?? .null))
        case "unchanged":
            text("unchanged \(screen) v\(version ?? 0) (resumed)")
        case "patch":
            updates += 1
            guard let current = tree, let opsJSON = json["ops"], let ops = try? JSONPatch(json: opsJSON),
                let patched = try? ops.apply(to: current), ScreenHash.of(patched) == json["hash"]?.stringValue
            else {
                output.note("a patch did not apply or its hash differs; resubscribing for a snapshot")
                tree = nil
                try? socket.sendText(
                    JSONWriter.string(.object(["type": .string("unsubscribe"), "screen": .string(screen)])))
                try? subscribe(socket)
                return nil
            }
            tree = patched
            hold(json)
            text(
                "patch \(screen) v\(json["from"]?.intValue ?? 0) -> v\(version ?? 0): \(ops.operations.count) ops, hash ok",
                JSONWriter.string(opsJSON))
            try? socket.sendText(
                JSONWriter.string(
                    .object([
                        "type": .string("rendered"), "screen": .string(screen),
                        "version": .number(Double(version ?? 0)),
                    ])))
        case "sync":
            guard let id = json["id"]?.stringValue else { return nil }
            if let seq = json["seq"]?.intValue { lastSync = max(lastSync ?? 0, seq) }
            try? socket.sendText(JSONWriter.string(.object(["type": .string("ack"), "sync": .string(id)])))
            guard seenSyncs.insert(id).inserted else { return nil }
            text("sync \(id) reason \(json["reason"]?.stringValue ?? "") scope \(json["scope"]?.stringValue ?? "")"
                + (json["mandatory"] == .bool(true) ? " mandatory" : "") + " (acked)")
        case "gone":
            text("gone \(screen)")
            return ExitCode.success
        case "error":
            let code = json["code"]?.stringValue ?? "error"
            return refused("\(code): \(json["message"]?.stringValue ?? "")")
        default:
            break
        }
        return nil
    }

    private mutating func hold(_ json: JSONValue) {
        version = json["version"]?.intValue
        hash = json["hash"]?.stringValue
    }

    /// Lines for people (in `--json` mode the messages themselves are printed instead).
    private func text(_ lines: String...) {
        guard !output.json else { return }
        for line in lines { output.print(line) }
    }

    private func refused(_ message: String) -> Int32 {
        output.error(message)
        return ExitCode.refused
    }
}
