import Foundation
import PushHub
import PushHubClient

/// `hubctl watch SCREEN`: a real client of the hub (DESIGN §8), built on `PushHubClient`. It signs
/// in (`--client-token`, or `--user` minted from the JWT secret, or anonymously as `--device`),
/// subscribes, prints the snapshot and then each patch as it arrives (hash-checked), prints and
/// acks syncs as they arrive (no jitter wait), answers the hub's pings, and after a drop
/// reconnects with backoff and full jitter and resumes with `have` and `last_sync`.
/// Every line is flushed as it is printed (a pipe or a file gets it at once).
enum Watch: Command {
    static let name = "watch"
    static let abstract = "Be a client: print a screen's snapshot and each patch live (hash-checked), and syncs."
    static let usage = """
        hubctl watch SCREEN [--client-token JWT | --user U [--secret-file F]] [--device D] [--platform P]
                     [--app-version V] [--ws-url ws[s]://HOST:PORT] [--count N]
        """
    static let options: [(String, String)] = [
        ("--client-token JWT", "sign in with this client token (--token is the admin token, as everywhere)"),
        ("--user U", "sign in as U with a token minted from the JWT secret (see 'hubctl token')"),
        ("--secret-file F", "with --user: the JWT secret (default: as 'hubctl token', --data DIR included)"),
        ("--device D", "the device id to present (default hubctl-watch)"),
        ("--platform P", "the platform to present (default hubctl)"),
        ("--app-version V", "the app version to present (capability filter)"),
        ("--ws-url URL", "client listener, ws:// or wss:// (env HUBCTL_WS_URL; default: the admin host, the hub's client port and scheme)"),
        ("--count N", "exit 0 after N updates (snapshot included)"),
    ]

    /// `--token` after `watch` was the client token before `--client-token`; it is still read so
    /// when its value is a JWT (the hub makes its admin tokens as hex: never a JWT). Any other
    /// value is the admin token, as `--token` is everywhere else.
    static let hiddenOptions: [(String, String)] = [("--token T", "")]

    /// Longest wait between reconnection attempts.
    static let maxBackoff: Duration = .seconds(30)

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        guard arguments.words.count == 2 else { return usageError("'watch' takes SCREEN.") }
        var arguments = arguments
        var client = client
        if let value = arguments.options.removeValue(forKey: "--token")?.last {
            if isJWT(value) {
                output.note("note: 'watch --token JWT' is read as '--client-token JWT'; --token is the admin token")
                arguments.options["--client-token", default: []].append(value)
            } else {
                guard arguments.token == nil else { return usageError("'--token' is given twice; it takes one value.") }
                client.token = value
            }
        }
        let limit = arguments.options["--count"]?.last.flatMap(Int.init)
        let url: HubURL
        switch clientURL(arguments, client: client) {
        case .success(let found): url = found
        case .failure(let error):
            output.error(error.description)
            return ExitCode.unreachable
        }
        let device = arguments.options["--device"]?.last ?? "hubctl-watch"
        let credentials: Credentials
        switch signIn(arguments) {
        case .success(let token?): credentials = .token(token, device: device)
        case .success(nil): credentials = .device(device)
        case .failure(let error): return usageError(error.message)
        }
        let app = AppInfo(
            platform: arguments.options["--platform"]?.last ?? "hubctl",
            version: arguments.options["--app-version"]?.last ?? "999.0.0")
        let watcher = Watcher(screen: arguments.words[1], output: output, limit: limit)
        var options = PushHubClient.Options()
        options.backoff = Backoff(initial: .milliseconds(500), cap: maxBackoff)
        options.waitsForJitter = false  // a sync is printed (and acked) as it arrives
        if output.json { options.onMessage = { output.print($0) } }
        let hub = PushHubClient(
            url: url, credentials: credentials, app: app, transport: SocketTransport(trust: client.trust), options: options)
        hub.on { watcher.event($0) }
        hub.onSync { watcher.sync($0) }
        hub.subscribe(watcher.screen, onTree: { tree, meta in watcher.tree(tree, meta) }, onPending: watcher.pending)
        let code = watcher.exitCode()
        hub.closeAndWait()  // what it sent last (the `rendered` of what it printed) reaches the hub
        return code
    }

    /// The client token: `--client-token`, or one minted for `--user`; nil signs in anonymously.
    private static func signIn(_ arguments: Arguments) -> Result<String?, UsageError> {
        if let token = arguments.options["--client-token"]?.last { return .success(token) }
        guard let user = arguments.options["--user"]?.last else { return .success(nil) }
        let secret: String
        switch Token.jwtSecret(arguments) {
        case .success(let found): secret = found
        case .failure(let error):
            return .failure(UsageError("to sign in as \(user), \(error.message) (or pass --client-token JWT)"))
        }
        let now = Int(Date().timeIntervalSince1970)
        return .success(
            JWTVerifier.sign(["sub": .string(user), "exp": .number(Double(now + 24 * 3600))], secret: Array(secret.utf8)))
    }

    /// Whether `text` is a JWT: three base64url parts, the first a JSON object naming its `alg`.
    static func isJWT(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Base64URL.decode(parts[0]), let object = try? JSONReader.parse(header)
        else { return false }
        return object["alg"]?.stringValue != nil
    }

    /// The client listener: --ws-url, HUBCTL_WS_URL, or the admin host with the port and scheme
    /// (ws:// or wss://) the hub reports.
    static func clientURL(_ arguments: Arguments, client: AdminClient) -> Result<HubURL, AdminClient.Unreachable> {
        if let text = arguments.options["--ws-url"]?.last ?? ProcessInfo.processInfo.environment["HUBCTL_WS_URL"] {
            guard let url = HubURL(text) else {
                return .failure(AdminClient.Unreachable(description: "--ws-url wants ws://HOST:PORT or wss://HOST:PORT, not '\(text)'"))
            }
            return .success(url)
        }
        do {
            let answer = try client.send("GET", "/v1/stats")
            // An answer that is not the stats (whatever the reader says of it) is reported below
            // with its status and the way around it (--ws-url).
            guard answer.status == 200, let stats = try? JSONReader.parse(answer.body),
                let listen = stats["client_listen"]?.stringValue, let address = SocketAddress(parsing: listen)
            else {
                return .failure(
                    AdminClient.Unreachable(
                        description: "cannot learn the client port from /v1/stats (\(answer.status)); pass --ws-url"))
            }
            let scheme = stats["client_tls"] == .bool(true) ? "wss" : "ws"
            return .success(HubURL(scheme: scheme, host: client.address.host, port: address.port, path: "/v1/connect"))
        } catch {
            return .failure(error)
        }
    }
}

/// What `hubctl watch` prints of what its `PushHubClient` hands over, and when it is done.
///
/// Invariant (why `@unchecked Sendable` holds): `updates` and `done` are touched only by the
/// client's callbacks, which run one at a time on its queue; `finished` is a semaphore.
private final class Watcher: @unchecked Sendable {
    let screen: String
    let output: Output
    let limit: Int?
    private var updates = 0
    private var done: Int32?
    private let finished = DispatchSemaphore(value: 0)

    init(screen: String, output: Output, limit: Int?) {
        self.screen = screen
        self.output = output
        self.limit = limit
    }

    /// Blocks until the watch is over; its exit code.
    func exitCode() -> Int32 {
        finished.wait()
        return done ?? ExitCode.success
    }

    private func finish(_ code: Int32) {
        guard done == nil else { return }
        done = code
        finished.signal()
    }

    func tree(_ tree: JSONValue, _ meta: TreeMeta) {
        guard done == nil else { return }
        switch meta.source {
        case .snapshot:
            text("snapshot \(screen) v\(meta.version) hash \(meta.hash)", JSONWriter.string(tree))
        case .patch:
            let operations = meta.patch?.operations.count ?? 0
            text(
                "patch \(screen) v\(meta.from ?? 0) -> v\(meta.version): \(operations) ops, hash ok",
                JSONWriter.string(meta.patch?.json ?? .array([])))
        case .unchanged:
            text("unchanged \(screen) v\(meta.version) (resumed)")
            return
        case .cache:
            return
        }
        updates += 1
        if let limit, updates >= limit { finish(ExitCode.success) }
    }

    /// The screen has no version yet: the watch waits for its first publish (and says so).
    @Sendable func pending() {
        guard done == nil else { return }
        output.note("\(screen) is not published yet; waiting for its first version")
    }

    func sync(_ sync: SyncNotification) {
        guard done == nil else { return }
        text("sync \(sync.id) reason \(sync.reason) scope \(sync.scope)" + (sync.mandatory ? " mandatory" : "") + " (acked)")
    }

    func event(_ event: ClientEvent) {
        guard done == nil else { return }
        switch event {
        case .error(let error):
            output.error("\(error.code): \(error.message)")
            finish(ExitCode.refused)
        case .closed(let code, let reason, let retryIn?, _, _):
            if code == 1008 {
                output.error("closed: \(reason)")
                return finish(ExitCode.refused)
            }
            output.note("disconnected (\(code) \(reason)); reconnecting in \(retryIn)")
        case .closed(_, _, nil, _, let error):
            if error == nil { finish(ExitCode.success) } else { finish(ExitCode.refused) }
        case .resubscribe(_, let reason, _, _, _):
            output.note("\(reason.rawValue): resubscribing for a snapshot")
        case .gone:
            text("gone \(screen)")
            finish(ExitCode.success)
        case .state, .welcome, .mismatch:
            break
        }
    }

    /// Lines for people (in `--json` mode the messages themselves are printed instead).
    private func text(_ lines: String...) {
        guard !output.json else { return }
        for line in lines { output.print(line) }
    }
}
