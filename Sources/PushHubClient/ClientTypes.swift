import ScreenTree

/// How the client signs in (DESIGN §3): a JWT, a function that returns a fresh one before every
/// connection (refresh it there), or an anonymous unit id (`device`; hubs in dev or
/// `--allow-anonymous` mode). `.anonymous` generates a device id once and keeps it in storage.
/// A signed-in client may also name its `device` (shown in `/v1/clients`, one user's devices apart).
public enum Credentials: Sendable {
    case token(String, device: String? = nil)
    case tokenProvider(@Sendable () -> String?, device: String? = nil)
    case device(String)
    case anonymous
}

/// The app as `hello.app` describes it: used for targeting and the capability filter.
public struct AppInfo: Sendable, Equatable {
    public var platform: String?
    public var version: String?

    public init(platform: String? = nil, version: String? = nil) {
        self.platform = platform
        self.version = version
    }
}

public enum ConnectionState: String, Sendable, Equatable {
    /// The first connection is being made.
    case connecting
    /// Welcomed by the hub.
    case live
    /// Waiting to retry, or retrying, after a drop.
    case reconnecting
    /// `close()` was called, or the hub refused in a way retrying cannot fix.
    case closed
}

/// What came with a tree.
public struct TreeMeta: Sendable, Equatable {
    public enum Source: String, Sendable, Equatable {
        /// From storage, before the hub confirmed it.
        case cache
        case snapshot
        case patch
        /// The hub confirmed that the cached tree is current.
        case unchanged
    }

    public var version: Int
    public var hash: String
    public var source: Source
    /// For `.patch`: the version it applied to and its RFC 6902 operations (to animate a change,
    /// or print it as `hubctl watch` does).
    public var from: Int?
    public var patch: JSONPatch?
    /// The running experiments that shaped this tree for this client, experiment key → variant
    /// key (DESIGN §6), for the app's own analytics; empty when none did. A control variant
    /// without a patch counts. A snapshot or `unchanged` sets it; a patch changes it only when the
    /// hub says so (a change of variants alone comes as a patch without operations).
    public var variants: [String: String]

    public init(
        version: Int, hash: String, source: Source, from: Int? = nil, patch: JSONPatch? = nil,
        variants: [String: String] = [:]
    ) {
        self.version = version
        self.hash = hash
        self.source = source
        self.from = from
        self.patch = patch
        self.variants = variants
    }
}

/// A sync-now notification (DESIGN §5), handed to the app after its random 0..jitter wait.
public struct SyncNotification: Sendable, Equatable {
    public var id: String
    public var seq: Int
    public var reason: String
    public var scope: String
    public var hint: JSONValue?
    public var mandatory: Bool
    public var jitterMs: Int
    /// How long the client waited before handing it over (random 0..jitterMs).
    public var delayMs: Int
}

/// The hub's `welcome`.
public struct Welcome: Sendable, Equatable {
    public var session: String
    public var user: String?
    /// The hub sends something (a `heartbeat` when it has nothing else) at least this often.
    public var heartbeatSeconds: Int
    public var syncSeq: Int
    /// The identity of the hub's state: `syncSeq` and screen versions count within it (nil from
    /// hubs before epochs).
    public var epoch: String?
}

/// An `error` message from the hub (docs/protocol.md "Errors"), or a client-side problem
/// (`storage`, `connect`, `bad_json`). `screen` is set when a subscribe was refused: that
/// subscription ended (subscribe again to retry).
public struct HubError: Sendable, Equatable, Error {
    public var code: String
    public var message: String
    public var ref: String?
    public var screen: String?
}

/// Why the client dropped its copy of a screen and asked for a snapshot.
public enum ResubscribeReason: String, Sendable, Equatable {
    case hashMismatch = "hash_mismatch"
    case unexpectedFrom = "unexpected_from"
    case patchFailed = "patch_failed"
    case noTree = "no_tree"
}

/// What the client tells the app besides trees and syncs.
public enum ClientEvent: Sendable, Equatable {
    case state(ConnectionState)
    case welcome(Welcome)
    /// The connection closed; `retryIn` is nil when the client will not reconnect (`close()`, or
    /// an error reconnecting cannot fix, given in `error`).
    case closed(code: UInt16, reason: String, retryIn: Duration?, attempt: Int, error: HubError?)
    case error(HubError)
    case resubscribe(screen: String, reason: ResubscribeReason, held: Int?, from: Int?, version: Int?)
    /// A tree whose hash differs from the hub's (after a patch, a resubscribe follows).
    case mismatch(screen: String, version: Int, expected: String, actual: String, source: TreeMeta.Source)
    /// The screen was deleted; its subscription ended.
    case gone(screen: String)
}

/// Counters for diagnostics and tests.
public struct ClientStats: Sendable, Equatable {
    public var connects = 0
    public var welcomes = 0
    public var snapshots = 0
    public var patches = 0
    public var unchanged = 0
    public var resubscribes = 0
    public var syncs = 0
    /// Syncs dropped because their id was seen already (a replay, or the socket and a push both).
    public var duplicateSyncs = 0
    /// Syncs handed to the app from a silent push (`handlePush`), not seen on the socket before.
    public var pushedSyncs = 0
    /// `pending` answers: subscriptions to screens not published yet.
    public var pending = 0
    /// Connections given up because nothing arrived for 2 × heartbeat_s + 2 s.
    public var deadLinks = 0
    /// Welcomes that named another hub state than the one storage held (what it held was dropped).
    public var epochChanges = 0
    /// `track` events sent to the hub (at once, or after the welcome that ended a wait).
    public var tracks = 0
    /// `track` events dropped unsent: the oldest beyond 100 waiting while not connected, those
    /// waiting for a user the client no longer signs in as, and those waiting or made once the
    /// client is closed for good.
    public var droppedTracks = 0
}
