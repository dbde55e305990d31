import HTTP1

/// The `pushhub` command line and environment (DESIGN §10): flags win over `PUSHHUB_*`
/// environment variables, which win over the defaults.
///
/// Invariant: `parse` either returns a complete config or throws a `UsageError` naming the
/// flag or variable at fault.
public enum HubOptions {
    /// A flag or variable the hub cannot use; the description names it (exit 2).
    public struct UsageError: Error, CustomStringConvertible {
        public var description: String
    }

    public static let usage = """
        USAGE: pushhub [--config FILE | --check-config FILE] [--listen HOST:PORT] [--admin HOST:PORT] [--data DIR] [--loops N]
                       [--echo-path PATH] [--dev] [--allow-anonymous] [--keep-versions N] [--strict-components]
                       [--jwt-issuer ISS] [--jwt-audience AUD] [--jwt-require-exp[=on|off]]
                       [--jwt-public-key FILE]… [--jwt-jwks URL]
                       [--message-rate N/s] [--message-burst N] [--max-connections N]
                       [--max-connections-per-ip N] [--max-subscriptions N] [--allowed-origins URL,URL]
                       [--tls-cert FILE --tls-key FILE] [--admin-tls-cert FILE --admin-tls-key FILE]
                       [--compression on|off] [--compression-min-bytes N]
                       [--log-level debug|info|warning|error]
                       [--handshake-timeout D] [--hello-timeout D] [--ping-interval D] [--idle-timeout D]
                       [--drain-timeout D] [--redis URL [--redis-ca FILE]] [--redis-sentinel HOST:PORT,… --redis-master NAME]
                       [--apns-key FILE --apns-key-id ID --apns-team ID] [--fcm-credentials FILE]
                       [--apns-url URL] [--fcm-url URL] [--push-ca FILE] [--push-queue N] [--outbound-ca FILE]
                       [--webhook-queue N]

        OPTIONS:
          --config FILE        settings as JSON, keys named after the flags (keep_versions, log_level, …);
                               flags win over env (PUSHHUB_*), which wins over the file (env PUSHHUB_CONFIG)
          --check-config FILE  validate FILE (with the env and other flags) and exit: 0 valid, 2 not
          --listen HOST:PORT   client WebSocket listener (env PUSHHUB_LISTEN; default 0.0.0.0:8080)
          --admin HOST:PORT    admin HTTP listener (env PUSHHUB_ADMIN; default 127.0.0.1:8081)
          --data DIR           data directory (env PUSHHUB_DATA; default ./data)
          --loops N            event loops, one thread each (env PUSHHUB_LOOPS; default: one per core)
          --echo-path PATH     add an echo endpoint at PATH (env PUSHHUB_ECHO_PATH; off by default)
          --dev                development mode: anonymous clients allowed (env PUSHHUB_DEV=1)
          --allow-anonymous    accept clients without a token (env PUSHHUB_ALLOW_ANONYMOUS=1; on with --dev)
          --message-rate N/s   messages and pings a client may send per second (env PUSHHUB_MESSAGE_RATE;
                               default 100/s; 0 = off)
          --message-burst N    ... and at once (env PUSHHUB_MESSAGE_BURST; default 10 × the rate)
          --max-connections N  WebSocket connections at once; beyond, the upgrade is 503 (default 100000)
          --max-connections-per-ip N  WebSocket connections per client IPv4 address; beyond, 429
                               (default 0: no limit; behind a proxy leave it off)
          --max-subscriptions N  screens one connection may subscribe to (default 256)
          --allowed-origins URL,URL  browser Origins that may connect (default: any); others get 403
          --tls-cert FILE      TLS on the client listener (wss://, https://): the certificate chain (PEM,
                               leaf first) and --tls-key FILE its key; TLS 1.2+; SIGHUP reloads both
                               (env PUSHHUB_TLS_CERT, PUSHHUB_TLS_KEY)
          --admin-tls-cert FILE  TLS on the admin listener, with --admin-tls-key FILE
                               (env PUSHHUB_ADMIN_TLS_CERT, PUSHHUB_ADMIN_TLS_KEY)
          --compression on|off permessage-deflate for clients that offer it (env PUSHHUB_COMPRESSION;
                               default on): each shared frame is compressed once per loop
          --compression-min-bytes N  messages below N bytes go uncompressed (default 256)
          --keep-versions N    versions of each screen kept for resumption (env PUSHHUB_KEEP_VERSIONS; default 16)
          --strict-components  a publish whose nodes name an unregistered component type is refused
                               (env PUSHHUB_STRICT_COMPONENTS=1; off by default: such nodes pass as they are)
          --jwt-issuer ISS     require this iss in client tokens (env PUSHHUB_JWT_ISSUER)
          --jwt-audience AUD   require this aud in client tokens (env PUSHHUB_JWT_AUDIENCE)
          --jwt-require-exp[=on|off]  refuse client tokens without exp (env PUSHHUB_JWT_REQUIRE_EXP;
                               default on, off with --dev)
          --jwt-public-key FILE  client tokens may also be signed RS256, ES256 or EdDSA with this key (PEM
                               public key or certificate); repeatable (env PUSHHUB_JWT_PUBLIC_KEY, FILE,FILE)
          --jwt-jwks URL       ... or with the keys an identity provider publishes at URL (https; http only
                               to a loopback host), fetched at start and when a token names a new kid
                               (env PUSHHUB_JWT_JWKS)
          --handshake-timeout D   upgrade/admin request must arrive within D (default 10s)
          --hello-timeout D       a /v1/connect client must say hello within D (default 5s)
          --ping-interval D       ping after D without client traffic (default 25s)
          --idle-timeout D        close after D without client traffic (default 60s)
          --drain-timeout D       SIGTERM waits up to D for clients to close (default 10s)
                               (D is a number with ms, s, m, h or d, or a sum such as 1m30s)
          --redis URL          scale out: several hubs as one service over Redis, redis://[user:pass@]host:port/db
                               (env PUSHHUB_REDIS; docs/scale-out.md); without it the data dir's journal
          --redis-ca FILE      with rediss:// (TLS to Redis): the CA (PEM) Redis's certificate must chain to
                               (env PUSHHUB_REDIS_CA; default: the system's CAs)
          --redis-sentinel HOST:PORT,…  find the master through Redis Sentinel, with --redis-master NAME;
                               --redis then gives only the credentials and database (env PUSHHUB_REDIS_SENTINEL,
                               PUSHHUB_REDIS_MASTER)
          --apns-key FILE      silent pushes to iOS devices through APNs (docs/push.md): the token-signing key
                               (.p8) with --apns-key-id ID and --apns-team ID (env PUSHHUB_APNS_KEY, …)
          --fcm-credentials FILE  silent pushes to Android devices through FCM: a service account's JSON
                               (env PUSHHUB_FCM_CREDENTIALS)
          --apns-url URL       where APNs is (default https://api.push.apple.com; the sandbox is
                               https://api.sandbox.push.apple.com)
          --fcm-url URL        where FCM is (default https://fcm.googleapis.com)
          --push-ca FILE       the CAs (PEM) the push providers' certificates must chain to (default: the system's)
          --push-queue N       pushes waiting per provider; beyond, a push fails at once (default 500000)
          --webhook-queue N    events waiting per webhook (docs/integrations.md); beyond, the oldest is
                               dropped and counted (default 10000)
          --outbound-ca FILE   the CAs (PEM) that https servers the hub calls (JWKS, webhooks) must chain to
                               (env PUSHHUB_OUTBOUND_CA; default: the system's)
          --log-level LEVEL    env PUSHHUB_LOG_LEVEL; default info
          --version            print the version and the commit it was built from
          -h, --help           show this help
        Port 0 binds a free port; the "listening" log line says which.
        """

    /// Builds the config from `arguments` (without the program name), `environment` and the
    /// config file either names (flags > env > file).
    public static func parse(_ arguments: [String], environment: [String: String]) throws(UsageError)
        -> (config: HubConfig, logLevel: Log.Level, help: Bool, version: Bool, checkOnly: Bool)
    {
        var values: [String: String] = [:]
        for (flag, variable) in variables {
            if let value = environment[variable] { values[flag] = value }
        }
        if let path = environment["PUSHHUB_CONFIG"] { values["--config"] = path }
        var help = false
        var version = false
        var repeated: Set<String> = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "-h" || argument == "--help" {
                help = true
                continue
            }
            if argument == "--version" {
                version = true
                continue
            }
            if argument == "--dev" || argument == "--allow-anonymous" || argument == "--jwt-require-exp"
                || argument == "--strict-components"
            {
                values[argument] = "1"
                continue
            }
            let (flag, inline) = splitInline(argument)
            guard variables.keys.contains(flag) || flag == "--config" || flag == "--check-config" else {
                let known = Array(variables.keys) + ["--help", "--version"]
                let hint = NearestName.suggest(flag, among: known).map { " (did you mean '\($0)'?)" } ?? ""
                throw UsageError(description: "unknown option '\(argument)'\(hint)")
            }
            var value: String
            if let inline {
                value = inline
            } else {
                guard index < arguments.count else { throw UsageError(description: "missing value for '\(flag)'") }
                value = arguments[index]
                index += 1
            }
            // A repeatable flag: each use adds to the list (which replaces the env's and the file's).
            if Self.repeatable.contains(flag), let earlier = values[flag], repeated.contains(flag) {
                value = earlier + "," + value
            }
            repeated.insert(flag)
            values[flag] = value
        }
        if values["--check-config"] != nil, values["--config"] == nil { values["--config"] = values["--check-config"] }
        if let path = values["--config"] {
            // The file is the lowest layer: what env or flags set wins.
            values.merge(try ConfigFile.values(of: path, knownFlags: Array(variables.keys))) { set, _ in set }
        }
        var config = HubConfig()
        if let text = values["--listen"] {
            guard let address = SocketAddress(parsing: text) else {
                throw UsageError(description: "--listen wants HOST:PORT, not '\(text)'")
            }
            config.listen = address
        }
        if let text = values["--admin"] {
            guard let address = SocketAddress(parsing: text) else {
                throw UsageError(description: "--admin wants HOST:PORT, not '\(text)'")
            }
            config.admin = address
        }
        if let text = values["--data"] { config.dataDirectory = text }
        if let text = values["--loops"] {
            guard let loops = Int(text), loops > 0, loops <= 256 else {
                throw UsageError(description: "--loops wants 1...256, not '\(text)'")
            }
            config.loops = loops
        }
        if let text = values["--echo-path"] {
            guard text.hasPrefix("/"), text != "/v1/connect" else {
                throw UsageError(
                    description: "--echo-path wants a path starting with / other than /v1/connect, not '\(text)'")
            }
            config.echoPath = text
        }
        if let text = values["--dev"], try Self.switchSetting("--dev", text) {
            config.dev = true
            config.allowAnonymous = true
        }
        if let text = values["--allow-anonymous"] { config.allowAnonymous = try Self.switchSetting("--allow-anonymous", text) }
        if let text = values["--strict-components"] {
            config.strictComponents = try Self.switchSetting("--strict-components", text)
        }
        if let text = values["--jwt-issuer"] { config.jwtIssuer = text }
        if let text = values["--jwt-audience"] { config.jwtAudience = text }
        if let text = values["--jwt-require-exp"] { config.jwtRequireExpiry = try Self.switchSetting("--jwt-require-exp", text) }
        try Self.tokenKeys(values, into: &config)
        if let text = values["--keep-versions"] {
            guard let count = Int(text), (1...1000).contains(count) else {
                throw UsageError(description: "--keep-versions wants 1...1000, not '\(text)'")
            }
            config.keepVersions = count
        }
        if let text = values["--webhook-queue"] {
            guard let count = Int(text), (1...1_000_000).contains(count) else {
                throw UsageError(description: "--webhook-queue wants 1...1000000, not '\(text)'")
            }
            config.webhookQueueLimit = count
        }
        if values["--message-rate"] != nil || values["--message-burst"] != nil {
            var limit = config.clientMessageRate
            if let text = values["--message-rate"] {
                let number = text.hasSuffix("/s") ? String(text.dropLast(2)) : text
                guard let rate = Int(number), (0...1_000_000).contains(rate) else {
                    throw UsageError(description: "--message-rate wants messages per second such as 100/s (0 = off), not '\(text)'")
                }
                limit = MessageRateLimit(perSecond: rate, burst: max(rate * 10, 1))
            }
            if let text = values["--message-burst"] {
                guard let burst = Int(text), (1...10_000_000).contains(burst) else {
                    throw UsageError(description: "--message-burst wants a number of messages 1...10000000, not '\(text)'")
                }
                limit.burst = burst
            }
            config.clientMessageRate = limit
        }
        for (flag, keyPath, range) in counts {
            guard let text = values[flag] else { continue }
            guard let count = Int(text), range.contains(count) else {
                throw UsageError(description: "\(flag) wants \(range.lowerBound)...\(range.upperBound), not '\(text)'")
            }
            config[keyPath: keyPath] = count
        }
        if let text = values["--allowed-origins"] {
            let origins = text.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
            for origin in origins where !(origin.hasPrefix("https://") || origin.hasPrefix("http://")) || origin.count < 9 {
                throw UsageError(description: "--allowed-origins wants origins such as https://app.example.com, not '\(origin)'")
            }
            config.allowedOrigins = origins
        }
        for (flag, keyPath) in durations {
            guard let text = values[flag] else { continue }
            guard let duration = Self.duration(text), duration > .zero else {
                throw UsageError(description: "\(flag) wants a duration such as 500ms, 25s or 1m, not '\(text)'")
            }
            config[keyPath: keyPath] = duration
        }
        if let text = values["--redis"] {
            let url: RedisURL
            do {
                url = try RedisURL(text)
            } catch {
                throw UsageError(description: "--redis: \(error)")
            }
            config.redis = url
            if url.usesTLS {
                do {
                    config.redisTLS = try TLSClientContext(caFile: values["--redis-ca"])
                } catch {
                    throw UsageError(description: "--redis-ca: \(error)")
                }
            } else if values["--redis-ca"] != nil {
                throw UsageError(description: "--redis-ca is for TLS to Redis: use a rediss:// URL with it")
            }
        }
        switch (values["--redis-sentinel"], values["--redis-master"]) {
        case (nil, nil): break
        case (let list?, let master?):
            var sentinels: [SocketAddress] = []
            for item in list.split(separator: ",").map({ $0.trimmingWhitespace() }) where !item.isEmpty {
                guard let address = SocketAddress(parsing: item) else {
                    throw UsageError(description: "--redis-sentinel wants HOST:PORT,HOST:PORT, not '\(item)'")
                }
                sentinels.append(address)
            }
            guard !sentinels.isEmpty, !master.isEmpty else {
                throw UsageError(description: "--redis-sentinel wants at least one HOST:PORT and --redis-master a name")
            }
            config.redisSentinels = sentinels
            config.redisMaster = master
            // Credentials and database come from --redis when given; the address from Sentinel.
            if config.redis == nil { config.redis = RedisURL(host: sentinels[0].host, port: Int(sentinels[0].port)) }
        case (_?, nil): throw UsageError(description: "--redis-sentinel needs --redis-master (the name Sentinel monitors)")
        case (nil, _?): throw UsageError(description: "--redis-master needs --redis-sentinel (where Sentinel listens)")
        }
        config.push = try pushSettings(values)
        if let path = values["--outbound-ca"] {
            // Read now, so that a missing or bad file stops the start (and --check-config) here.
            do {
                _ = try TLSClientContext(caFile: path)
            } catch {
                throw UsageError(description: "--outbound-ca: \(error)")
            }
            config.outboundCAFile = path
        }
        if let text = values["--compression"] { config.compression = try Self.switchSetting("--compression", text) }
        config.tls = try tlsContext(values, certificate: "--tls-cert", key: "--tls-key")
        config.adminTLS = try tlsContext(values, certificate: "--admin-tls-cert", key: "--admin-tls-key")
        var level = Log.Level.info
        if let text = values["--log-level"] {
            guard let parsed = [Log.Level.debug, .info, .warning, .error].first(where: { "\($0)" == text }) else {
                throw UsageError(description: "--log-level wants debug, info, warning or error, not '\(text)'")
            }
            level = parsed
        }
        return (config, level, help, version, values["--check-config"] != nil)
    }

    /// The push providers' flags (DESIGN §17): APNs's three together, URLs as https://host[:port].
    static func pushSettings(_ values: [String: String]) throws(UsageError) -> PushSettings {
        var settings = PushSettings()
        let apns = ["--apns-key", "--apns-key-id", "--apns-team"]
        let given = apns.filter { values[$0] != nil }
        if !given.isEmpty && given.count < apns.count {
            let missing = apns.filter { values[$0] == nil }.joined(separator: " and ")
            throw UsageError(description: "\(given.joined(separator: " and ")) needs \(missing) (APNs token-based auth)")
        }
        for flag in given where values[flag]!.isEmpty { throw UsageError(description: "\(flag) wants a value") }
        settings.apnsKey = values["--apns-key"]
        settings.apnsKeyID = values["--apns-key-id"]
        settings.apnsTeam = values["--apns-team"]
        if let path = values["--fcm-credentials"] {
            guard !path.isEmpty else { throw UsageError(description: "--fcm-credentials wants a file") }
            settings.fcmCredentials = path
        }
        for (flag, keyPath) in [("--apns-url", \PushSettings.apnsEndpoint), ("--fcm-url", \PushSettings.fcmEndpoint)] {
            guard let text = values[flag] else { continue }
            guard let endpoint = PushEndpoint(url: text) else {
                throw UsageError(description: "\(flag) wants https://HOST[:PORT], not '\(text)'")
            }
            settings[keyPath: keyPath] = endpoint
        }
        settings.caFile = values["--push-ca"]
        if let text = values["--push-queue"] {
            guard let count = Int(text), (1...10_000_000).contains(count) else {
                throw UsageError(description: "--push-queue wants 1...10000000, not '\(text)'")
            }
            settings.maxQueued = count
        }
        return settings
    }

    /// Flags that may be given more than once (their values are a comma-separated list in the
    /// environment and the config file).
    static let repeatable: Set<String> = ["--jwt-public-key"]

    /// The public keys of client tokens (DESIGN §18): the PEM files, read now, and the JWKS URL.
    static func tokenKeys(_ values: [String: String], into config: inout HubConfig) throws(UsageError) {
        if let list = values["--jwt-public-key"] {
            for path in list.split(separator: ",").map({ $0.trimmingWhitespace() }) {
                do {
                    config.jwtPublicKeys.append(try JWTKey(publicKeyFile: path))
                } catch {
                    throw UsageError(description: "--jwt-public-key: \(error)")
                }
            }
        }
        if let text = values["--jwt-jwks"] {
            let url: HTTPURL
            do {
                url = try HTTPURL(parsing: text)
            } catch {
                throw UsageError(description: "--jwt-jwks: \(error)")
            }
            guard url.origin.isTLS || url.isLoopback else {
                throw UsageError(
                    description: "--jwt-jwks wants an https:// URL (http:// only to a loopback host, for tests), not '\(text)'")
            }
            config.jwtJWKS = url
        }
    }

    /// The TLS context a pair of flags names: both or neither.
    static func tlsContext(_ values: [String: String], certificate: String, key: String) throws(UsageError)
        -> TLSContext?
    {
        switch (values[certificate], values[key]) {
        case (nil, nil): return nil
        case (let certificatePath?, let keyPath?):
            do {
                return try TLSContext(certificate: certificatePath, key: keyPath)
            } catch {
                throw UsageError(description: "\(certificate)/\(key): \(error)")
            }
        case (_?, nil): throw UsageError(description: "\(certificate) needs \(key) (the certificate's private key)")
        case (nil, _?): throw UsageError(description: "\(key) needs \(certificate) (the certificate chain)")
        }
    }

    static var counts: [(String, WritableKeyPath<HubConfig, Int>, ClosedRange<Int>)] {
        [
            ("--max-connections", \.maxConnections, 1...10_000_000),
            ("--max-connections-per-ip", \.maxConnectionsPerAddress, 0...10_000_000),
            ("--max-subscriptions", \.maxSubscriptions, 1...100_000),
            ("--compression-min-bytes", \.compressionMinimumBytes, 0...16 << 20),
        ]
    }

    static var durations: [(String, WritableKeyPath<HubConfig, Duration>)] {
        [
            ("--handshake-timeout", \.handshakeTimeout), ("--hello-timeout", \.helloTimeout),
            ("--ping-interval", \.pingInterval), ("--idle-timeout", \.idleTimeout), ("--drain-timeout", \.drainTimeout),
        ]
    }

    /// Parses `500ms`, `25s`, `2m`, `1h`, `30d`, `1h30m` (`DurationText`).
    public static func duration(_ text: String) -> Duration? { DurationText.parse(text) }

    /// `on`/`off` and their synonyms (`1`/`0`, `true`/`false`, `yes`/`no`); anything else is a
    /// usage error naming the flag, since a typo must not pick a side (`PUSHHUB_DEV=7es`).
    static func switchSetting(_ flag: String, _ text: String) throws(UsageError) -> Bool {
        switch text.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw UsageError(description: "\(flag) wants on or off, not '\(text)'")
        }
    }

    static let variables: [String: String] = [
        "--allow-anonymous": "PUSHHUB_ALLOW_ANONYMOUS", "--keep-versions": "PUSHHUB_KEEP_VERSIONS",
        "--strict-components": "PUSHHUB_STRICT_COMPONENTS",
        "--jwt-issuer": "PUSHHUB_JWT_ISSUER", "--jwt-audience": "PUSHHUB_JWT_AUDIENCE",
        "--jwt-require-exp": "PUSHHUB_JWT_REQUIRE_EXP", "--message-rate": "PUSHHUB_MESSAGE_RATE",
        "--jwt-public-key": "PUSHHUB_JWT_PUBLIC_KEY", "--jwt-jwks": "PUSHHUB_JWT_JWKS",
        "--message-burst": "PUSHHUB_MESSAGE_BURST",
        "--max-connections": "PUSHHUB_MAX_CONNECTIONS", "--max-connections-per-ip": "PUSHHUB_MAX_CONNECTIONS_PER_IP", "--max-subscriptions": "PUSHHUB_MAX_SUBSCRIPTIONS",
        "--allowed-origins": "PUSHHUB_ALLOWED_ORIGINS",
        "--compression": "PUSHHUB_COMPRESSION", "--compression-min-bytes": "PUSHHUB_COMPRESSION_MIN_BYTES",
        "--handshake-timeout": "PUSHHUB_HANDSHAKE_TIMEOUT", "--hello-timeout": "PUSHHUB_HELLO_TIMEOUT",
        "--ping-interval": "PUSHHUB_PING_INTERVAL", "--idle-timeout": "PUSHHUB_IDLE_TIMEOUT",
        "--drain-timeout": "PUSHHUB_DRAIN_TIMEOUT",
        "--listen": "PUSHHUB_LISTEN", "--admin": "PUSHHUB_ADMIN", "--data": "PUSHHUB_DATA", "--loops": "PUSHHUB_LOOPS",
        "--echo-path": "PUSHHUB_ECHO_PATH", "--dev": "PUSHHUB_DEV", "--log-level": "PUSHHUB_LOG_LEVEL",
        "--tls-cert": "PUSHHUB_TLS_CERT", "--tls-key": "PUSHHUB_TLS_KEY",
        "--admin-tls-cert": "PUSHHUB_ADMIN_TLS_CERT", "--admin-tls-key": "PUSHHUB_ADMIN_TLS_KEY",
        "--redis": "PUSHHUB_REDIS", "--redis-sentinel": "PUSHHUB_REDIS_SENTINEL", "--redis-master": "PUSHHUB_REDIS_MASTER",
        "--redis-ca": "PUSHHUB_REDIS_CA",
        "--apns-key": "PUSHHUB_APNS_KEY", "--apns-key-id": "PUSHHUB_APNS_KEY_ID", "--apns-team": "PUSHHUB_APNS_TEAM",
        "--apns-url": "PUSHHUB_APNS_URL", "--fcm-credentials": "PUSHHUB_FCM_CREDENTIALS", "--fcm-url": "PUSHHUB_FCM_URL",
        "--push-ca": "PUSHHUB_PUSH_CA", "--push-queue": "PUSHHUB_PUSH_QUEUE",
        "--webhook-queue": "PUSHHUB_WEBHOOK_QUEUE",
        "--outbound-ca": "PUSHHUB_OUTBOUND_CA",
    ]

    /// `--flag=value` → ("--flag", "value").
    static func splitInline(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}
