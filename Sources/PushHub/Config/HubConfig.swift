import HTTP1
import WSProtocol

/// Everything a hub needs to start. Defaults are DESIGN §9/§10's.
///
/// Invariant: every duration is positive and `outboundLowWatermark < outboundHighWatermark <
/// outboundHardLimit`.
public struct HubConfig: Sendable {
    public var listen = SocketAddress(host: "0.0.0.0", port: 8080)
    public var admin = SocketAddress(host: "127.0.0.1", port: 8081)
    public var dataDirectory = "./data"
    /// Event loops (threads); default one per core.
    public var loops = 0
    /// Path of the echo endpoint; nil turns it off (DESIGN §10).
    public var echoPath: String?
    /// TLS on the client listener (`--tls-cert`/`--tls-key`): wss:// and https:// there; nil is
    /// plain TCP. A SIGHUP reload replaces it (new connections get the new certificate).
    public var tls: TLSContext?
    /// TLS on the admin listener (`--admin-tls-cert`/`--admin-tls-key`), separately.
    public var adminTLS: TLSContext?
    /// Development mode: anonymous clients allowed.
    public var dev = false
    public var allowAnonymous = false
    /// A publish naming an unregistered component type is refused (DESIGN §16).
    public var strictComponents = false
    /// WebSocket connections the hub holds at once; an upgrade beyond is answered 503.
    public var maxConnections = 100_000
    /// WebSocket connections one client IPv4 address may hold (0: no limit); beyond, 429.
    /// Behind a proxy every client has the proxy's address: leave it off there.
    public var maxConnectionsPerAddress = 0
    /// Subscriptions one connection may hold (DESIGN §9).
    public var maxSubscriptions = HubConfig.defaultMaxSubscriptions
    public static let defaultMaxSubscriptions = 256
    /// Browser `Origin`s allowed to open a client connection (empty: any). Requests without an
    /// `Origin` (native apps) are not affected.
    public var allowedOrigins: [String] = []
    /// Agree to permessage-deflate (RFC 7692) when a client offers it (`--compression on|off`);
    /// a change applies to upgrades after it.
    public var compression = true
    /// Messages smaller than this go uncompressed (`--compression-min-bytes`): deflate does not
    /// pay for itself on a short sync or welcome.
    public var compressionMinimumBytes = 256
    /// Messages (and pings) a `/v1/connect` client may send: a token bucket (DESIGN §9).
    var clientMessageRate = MessageRateLimit.default
    public var clientLimits = ProtocolLimits.default
    public var echoLimits = ProtocolLimits.echo
    /// A client that has not finished its upgrade request by then is answered 408 and closed.
    public var handshakeTimeout: Duration = .seconds(10)
    /// A `/v1/connect` client must say hello within this (DESIGN §3).
    public var helloTimeout: Duration = .seconds(5)
    /// A ping goes out after this long without traffic from the client.
    public var pingInterval: Duration = .seconds(25)
    /// A connection without any traffic for this long is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// How long a close frame we sent waits for the peer's answer.
    public var closeTimeout: Duration = .seconds(5)
    /// How long SIGTERM waits for clients to answer their 1001 before exiting.
    public var drainTimeout: Duration = .seconds(10)
    /// Reading stops above the high watermark and resumes below the low one; past the hard
    /// limit the connection is closed with 1008 (DESIGN §9).
    public var outboundLowWatermark = 256 << 10
    public var outboundHighWatermark = 1 << 20
    public var outboundHardLimit = 64 << 20
    /// Expected JWT `iss` and `aud` (unchecked when nil).
    public var jwtIssuer: String?
    public var jwtAudience: String?
    /// Refuse client tokens without `exp`; nil: on, except in `--dev` (issue 9).
    public var jwtRequireExpiry: Bool?
    /// Whether tokens without `exp` are refused, after the default.
    public var requiresTokenExpiry: Bool { jwtRequireExpiry ?? !dev }
    /// Public keys client tokens may be signed with (`--jwt-public-key FILE`, repeatable; DESIGN
    /// §18), read when the options are parsed; each has no kid and verifies its one algorithm.
    public var jwtPublicKeys: [JWTKey] = []
    /// The JWKS of an identity provider (`--jwt-jwks URL`): https, or http to a loopback host.
    public var jwtJWKS: HTTPURL?
    /// `jitter_ms` in every sync: clients wait a random 0...jitter before re-fetching (DESIGN §5).
    public var syncJitterMilliseconds = 4000
    /// Default sync TTL (DESIGN §5: 24 h).
    public var syncTTL: Duration = .seconds(24 * 3600)
    /// Versions of each screen kept for resumption by patch (DESIGN §4).
    public var keepVersions = 16
    /// Events waiting per webhook (DESIGN §18); beyond, the oldest is dropped (`--webhook-queue`).
    public var webhookQueueLimit = WebhookBook.defaultQueueLimit
    /// Scale-out (DESIGN §11): the Redis that holds the shared state; nil: the data dir's journal.
    var redis: RedisURL?
    /// Redis Sentinel: the sentinels to ask for the master named `redisMaster` (empty: connect to
    /// `redis`'s host). With sentinels, `redis` gives the credentials and the database.
    var redisSentinels: [SocketAddress] = []
    /// TLS to Redis (a `rediss://` URL): whom to trust (`--redis-ca`, else the system's CAs).
    var redisTLS: TLSClientContext?
    var redisMaster: String?
    /// Silent pushes through APNs and FCM (DESIGN §17); neither configured by default.
    public var push = PushSettings()
    /// The CAs (PEM) the servers the hub calls over https (JWKS, webhooks: DESIGN §18) must
    /// chain to (`--outbound-ca`); nil: the system's.
    public var outboundCAFile: String?
    /// Largest admin request body (DESIGN: 4 MiB).
    public var maxAdminBodyBytes = 4 << 20

    public init() {}

    /// Loops to start: the configured count, or one per online core.
    public var effectiveLoops: Int { loops > 0 ? loops : max(1, SystemInfo.onlineCores) }
}
