import Foundation
import PushHub
import PushHubClient
import Synchronization
import TestSupport

/// An in-process hub on loopback that can be restarted on the same port and data directory,
/// with the admin calls the client tests make.
final class HubFixture: @unchecked Sendable {
    /// Replaced by `restart(freshState: true)`: a wiped state (a new epoch).
    private(set) var dataDirectory = NSTemporaryDirectory() + "pushhub-client-tests-\(UUID().uuidString)"
    /// nil between a restart's stop and start: the old hub's data-dir lock goes with it. Read by
    /// the clients' threads too (a token provider while they reconnect), hence the lock.
    private let current = Mutex<Hub?>(nil)
    var hub: Hub! { current.withLock { $0 } }
    /// The JWT secret of the hub started last (tokens are still made while it is down).
    private let jwtSecret = Mutex<String>("")
    let port: UInt16
    let jitterMilliseconds: Int
    let pingInterval: Duration
    /// With `tls`: the self-signed certificate (for localhost and 127.0.0.1) the client listener uses.
    let certificate: String?
    private let tls: TLSContext?

    init(jitterMilliseconds: Int = 0, anonymous: Bool = true, tls: Bool = false, pingInterval: Duration = .seconds(25))
        throws
    {
        self.jitterMilliseconds = jitterMilliseconds
        self.pingInterval = pingInterval
        if tls {
            let (certificate, key) = try SelfSignedCertificate.make(in: dataDirectory + "-tls")
            self.certificate = certificate
            self.tls = try TLSContext(certificate: certificate, key: key)
        } else {
            certificate = nil
            self.tls = nil
        }
        let started = try Self.start(
            port: 0, data: dataDirectory, jitter: jitterMilliseconds, anonymous: anonymous, tls: self.tls,
            pingInterval: pingInterval)
        port = started.clientAddress.port
        running(started)
    }

    private func running(_ started: Hub?) {
        current.withLock { $0 = started }
        if let started { jwtSecret.withLock { $0 = started.secrets.jwtSecret } }
    }

    private static func start(
        port: UInt16, data: String, jitter: Int, anonymous: Bool, tls: TLSContext? = nil, pingInterval: Duration
    ) throws -> Hub {
        var config = HubConfig()
        config.allowAnonymous = anonymous
        config.listen = SocketAddress(host: "127.0.0.1", port: port)
        config.admin = SocketAddress(host: "127.0.0.1", port: 0)
        config.dataDirectory = data
        config.loops = 2
        config.syncJitterMilliseconds = jitter
        config.jwtRequireExpiry = false
        config.tls = tls
        config.pingInterval = pingInterval
        return try Hub(config: config)
    }

    var url: HubURL { HubURL("\(tls == nil ? "ws" : "wss")://localhost:\(port)/v1/connect")! }

    func stop() {
        hub.shutdown(drain: .milliseconds(200))
        hub.join()
    }

    /// Stops the hub (its clients get 1001), keeps it down for `downtime`, and starts it again on
    /// the same port: with the same data, or with `freshState` a new data directory (a wiped
    /// state: another epoch, other secrets).
    func restart(downtime: Duration, freshState: Bool = false) throws {
        stop()
        running(nil)
        Thread.sleep(forTimeInterval: downtime.seconds)
        if freshState { dataDirectory = NSTemporaryDirectory() + "pushhub-client-tests-\(UUID().uuidString)" }
        running(
            try Self.start(
                port: port, data: dataDirectory, jitter: jitterMilliseconds, anonymous: true, tls: tls,
                pingInterval: pingInterval))
    }

    @discardableResult
    func admin(_ method: String, _ path: String, _ body: String = "") throws -> (status: Int, json: JSONValue) {
        let answer = try BlockingHTTP.request(
            hub.adminAddress, method: method, path: path, body: Array(body.utf8), bearer: hub.secrets.adminToken)
        return (answer.status, (try? JSONReader.parse(answer.body)) ?? .null)
    }

    func publish(_ screen: String, _ tree: JSONValue) throws -> (version: Int, hash: String) {
        let (status, json) = try admin("PUT", "/v1/screens/\(screen)", JSONWriter.string(tree))
        guard status == 200, let version = json["version"]?.intValue, let hash = json["hash"]?.stringValue else {
            throw Failure("publish \(screen): \(status) \(json)")
        }
        return (version, hash)
    }

    /// Whether the sync `id`'s receipts count one ack.
    func acked(_ id: String) -> Bool {
        ((try? admin("GET", "/v1/syncs/\(id)").json["receipts"]?["acked"]) ?? nil) == .number(1)
    }

    /// What every transport must do: a snapshot, a patch (hash-checked), a sync acked. Returns the
    /// client (open; the caller closes it) and the second version's hash.
    func snapshotPatchAndSync(transport: any ClientTransport, device: String, options: PushHubClient.Options)
        throws -> (client: PushHubClient, hash: String)
    {
        _ = try publish("home", ClientAgainstHubTests.screen(#"{"title":"one"}"#))
        let client = PushHubClient(url: url, credentials: .device(device), transport: transport, options: options)
        let recorder = Recorder()
        recorder.attach(client, screen: "home")
        guard recorder.wait(until: { recorder.lastTree?.meta.version == 1 }) else { throw Failure("no snapshot") }
        let v2 = try publish("home", ClientAgainstHubTests.screen(#"{"title":"two"}"#))
        guard recorder.wait(until: { recorder.lastTree?.meta.version == v2.version }),
            recorder.lastTree?.meta.source == .patch, recorder.lastTree?.meta.hash == v2.hash
        else { throw Failure("no patch to v\(v2.version)") }
        let sync = try admin("POST", "/v1/syncs", #"{"target":{"all":true}}"#).json
        guard let id = sync["id"]?.stringValue, recorder.wait(until: { acked(id) }) else {
            throw Failure("the sync was not acked: \(sync)")
        }
        return (client, v2.hash)
    }

    func token(user: String) -> String {
        JWTVerifier.sign(["sub": .string(user)], secret: Array(jwtSecret.withLock { $0 }.utf8))
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

/// Collects what a client hands the app, for tests to wait on.
final class Recorder: Sendable {
    let trees = Mutex<[(tree: JSONValue, meta: TreeMeta)]>([])
    let events = Mutex<[ClientEvent]>([])
    let syncs = Mutex<[(sync: SyncNotification, at: ContinuousClock.Instant)]>([])

    func attach(_ client: PushHubClient, screen: String?) {
        client.on { event in self.events.withLock { $0.append(event) } }
        client.onSync { sync in self.syncs.withLock { $0.append((sync, ContinuousClock.now)) } }
        if let screen { client.subscribe(screen) { tree, meta in self.trees.withLock { $0.append((tree, meta)) } } }
    }

    var lastTree: (tree: JSONValue, meta: TreeMeta)? { trees.withLock { $0.last } }

    /// Waits up to `timeout` for `condition`; false if it never held.
    func wait(_ timeout: Duration = .seconds(10), until condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition()
    }
}
