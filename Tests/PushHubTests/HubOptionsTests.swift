import Foundation
import Testing
import TestSupport

@testable import PushHub

@Suite struct HubOptionsTests {
    @Test("flags win over the environment, which wins over defaults")
    func precedence() throws {
        let parsed = try HubOptions.parse(
            ["--listen", "127.0.0.1:9000", "--echo-path=/echo", "--hello-timeout", "500ms"],
            environment: [
                "PUSHHUB_LISTEN": "0.0.0.0:1", "PUSHHUB_ADMIN": "127.0.0.1:9001",
                "PUSHHUB_DEV": "1",
            ])
        #expect(parsed.config.listen == SocketAddress(host: "127.0.0.1", port: 9000))
        #expect(parsed.config.admin == SocketAddress(host: "127.0.0.1", port: 9001))
        #expect(parsed.config.echoPath == "/echo")
        #expect(parsed.config.helloTimeout == .milliseconds(500))
        #expect(parsed.config.dev && parsed.config.allowAnonymous)
        #expect(try HubOptions.parse([], environment: [:]).config.listen == SocketAddress(host: "0.0.0.0", port: 8080))
        let production = try HubOptions.parse(["--allow-anonymous", "--keep-versions", "4"], environment: [:]).config
        #expect(production.allowAnonymous && !production.dev && production.keepVersions == 4)
    }

    @Test("usage errors name the flag at fault")
    func errors() {
        for arguments in [
            ["--listen"], ["--listen", "nowhere"], ["--loops", "0"], ["--bogus"], ["--echo-path", "echo"],
            ["--idle-timeout", "5"], ["--config", "/nonexistent/hub.json"], ["--config", "/dev/zero"], ["--jwt-require-exp=maybe"],
            ["--message-rate", "fast"], ["--message-rate", "10/m"], ["--message-rate", "-1"], ["--message-burst", "0"],
            ["--max-connections", "0"], ["--max-subscriptions", "x"], ["--allowed-origins", "app.example.com"],
        ] {
            #expect(throws: HubOptions.UsageError.self) { try HubOptions.parse(arguments, environment: [:]) }
        }
        // A switch's typo is refused, not read as off (the fuzzer's find: PUSHHUB_DEV=1 beside
        // PUSHHUB_ALLOW_ANONYMOUS=7es gave a dev hub refusing anonymous clients).
        for environment in [["PUSHHUB_DEV": "7es"], ["PUSHHUB_DEV": "1", "PUSHHUB_ALLOW_ANONYMOUS": "7es"], ["PUSHHUB_COMPRESSION": "of"]] {
            #expect(throws: HubOptions.UsageError.self) { try HubOptions.parse([], environment: environment) }
        }
    }

    @Test("the message rate: N per second with bursts of 10 N unless --message-burst says, 0 for off")
    func messageRate() throws {
        #expect(try HubOptions.parse([], environment: [:]).config.clientMessageRate == .default)
        #expect(
            try HubOptions.parse(["--message-rate", "50/s"], environment: [:]).config.clientMessageRate
                == MessageRateLimit(perSecond: 50, burst: 500))
        #expect(
            try HubOptions.parse([], environment: ["PUSHHUB_MESSAGE_RATE": "5", "PUSHHUB_MESSAGE_BURST": "20"])
                .config.clientMessageRate
                == MessageRateLimit(perSecond: 5, burst: 20))
        #expect(try !HubOptions.parse(["--message-rate=0"], environment: [:]).config.clientMessageRate.isOn)
    }

    @Test("tokens must expire outside --dev unless the operator says otherwise")
    func tokenExpiry() throws {
        #expect(try HubOptions.parse([], environment: [:]).config.requiresTokenExpiry)
        #expect(try !HubOptions.parse(["--dev"], environment: [:]).config.requiresTokenExpiry)
        #expect(try HubOptions.parse(["--dev", "--jwt-require-exp"], environment: [:]).config.requiresTokenExpiry)
        #expect(try !HubOptions.parse(["--jwt-require-exp=off"], environment: [:]).config.requiresTokenExpiry)
        #expect(try !HubOptions.parse([], environment: ["PUSHHUB_JWT_REQUIRE_EXP": "0"]).config.requiresTokenExpiry)
    }

    @Test("a config file sets every flag; the environment overrides it, and a flag overrides both")
    func configFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hub-\(UInt32.random(in: 0...UInt32.max)).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (certificate, key) = try SelfSignedCertificate.make(in: path + "-tls")
        defer { try? FileManager.default.removeItem(atPath: path + "-tls") }
        let jwtKeys = try JWTTestKeys.shared()
        let file = #"""
            {"listen": "127.0.0.1:9100", "admin": "127.0.0.1:9101", "data": "/tmp/x", "loops": 3,
             "echo_path": "/echo", "dev": true, "keep_versions": 7, "jwt_issuer": "iss", "jwt_audience": "aud",
             "jwt_require_exp": true, "message_rate": "20/s", "message_burst": 40, "log_level": "warning",
             "handshake_timeout": "3s", "hello_timeout": "4s", "ping_interval": "5s", "idle_timeout": "6s",
             "drain_timeout": "7s", "allow_anonymous": false, "compression": "off", "compression_min_bytes": 1024,
             "max_connections": 1000, "max_connections_per_ip": 5, "max_subscriptions": 3,
             "allowed_origins": "https://a.example, http://localhost:3000",
             "tls_cert": "\#(certificate)", "tls_key": "\#(key)",
             "admin_tls_cert": "\#(certificate)", "admin_tls_key": "\#(key)",
             "redis": "rediss://hub:pw@10.0.0.5:6380/2", "redis_sentinel": "10.0.0.7:26379, 10.0.0.8:26379",
             "redis_master": "pushhub", "redis_ca": "\#(certificate)", "strict_components": true,
             "apns_key": "/k.p8", "apns_key_id": "KEY1234567", "apns_team": "TEAM123456",
             "apns_url": "https://api.sandbox.push.apple.com", "fcm_credentials": "/sa.json",
             "fcm_url": "https://127.0.0.1:8443/", "push_ca": "/ca.pem", "push_queue": 1000,
             "webhook_queue": 500,
             "jwt_public_key": ["\#(jwtKeys.publicKey("rsa"))", "\#(jwtKeys.publicKey("ed25519"))"],
             "jwt_jwks": "https://idp.example/.well-known/jwks.json", "outbound_ca": "\#(certificate)"}
            """#
        try file.write(toFile: path, atomically: true, encoding: .utf8)
        // Every flag the hub has (bar the file itself) is a key of this file: a new flag must join it.
        let members = try #require(try JSONReader.parse(Array(file.utf8)).objectValue)
        #expect(Set(HubOptions.variables.keys.map(ConfigFile.key(of:))) == Set(members.keys))
        let fromFile = try HubOptions.parse(["--config", path], environment: [:])
        let config = fromFile.config
        #expect(config.maxConnections == 1000 && config.maxConnectionsPerAddress == 5 && config.maxSubscriptions == 3)
        #expect(config.allowedOrigins == ["https://a.example", "http://localhost:3000"])
        #expect(config.tls != nil && config.adminTLS != nil)
        #expect(config.listen == SocketAddress(host: "127.0.0.1", port: 9100) && config.loops == 3)
        #expect(config.admin.port == 9101 && config.dataDirectory == "/tmp/x" && config.echoPath == "/echo")
        #expect(config.dev && !config.allowAnonymous && config.keepVersions == 7 && config.requiresTokenExpiry)
        #expect(config.jwtIssuer == "iss" && config.jwtAudience == "aud" && fromFile.logLevel == .warning)
        #expect(config.clientMessageRate == MessageRateLimit(perSecond: 20, burst: 40))
        #expect(config.handshakeTimeout == .seconds(3) && config.drainTimeout == .seconds(7))
        #expect(config.helloTimeout == .seconds(4) && config.pingInterval == .seconds(5) && config.idleTimeout == .seconds(6))
        #expect(!config.compression && config.compressionMinimumBytes == 1024)
        #expect(config.strictComponents)
        #expect(config.webhookQueueLimit == 500)
        #expect(config.jwtPublicKeys.map(\.algorithm) == [.rs256, .edDSA])
        #expect(config.jwtJWKS?.origin.host == "idp.example" && config.jwtJWKS?.target == "/.well-known/jwks.json")
        #expect(try !HubOptions.parse([], environment: [:]).config.strictComponents)
        #expect(try HubOptions.parse([], environment: ["PUSHHUB_STRICT_COMPONENTS": "1"]).config.strictComponents)
        #expect(config.redis?.description == "rediss://hub:***@10.0.0.5:6380/2")
        #expect(config.redisTLS?.caFile == certificate)
        #expect(config.redisSentinels.map(\.description) == ["10.0.0.7:26379", "10.0.0.8:26379"])
        #expect(config.redisMaster == "pushhub")
        #expect(config.push.apnsKey == "/k.p8" && config.push.apnsKeyID == "KEY1234567" && config.push.apnsTeam == "TEAM123456")
        #expect(config.push.apnsEndpoint == PushEndpoint(host: "api.sandbox.push.apple.com", port: 443))
        #expect(config.push.fcmCredentials == "/sa.json" && config.push.fcmEndpoint == PushEndpoint(host: "127.0.0.1", port: 8443))
        #expect(config.push.caFile == "/ca.pem" && config.push.maxQueued == 1000)
        #expect(config.outboundCAFile == certificate)
        #expect(try HubOptions.parse(["--config", path], environment: ["PUSHHUB_COMPRESSION": "on"]).config.compression)
        #expect(throws: HubOptions.UsageError.self) { try HubOptions.parse(["--compression", "maybe"], environment: [:]) }
        let overridden = try HubOptions.parse(
            ["--config", path, "--keep-versions", "9"], environment: ["PUSHHUB_KEEP_VERSIONS": "8", "PUSHHUB_LOOPS": "2"])
        #expect(overridden.config.keepVersions == 9 && overridden.config.loops == 2)
        #expect(try HubOptions.parse([], environment: ["PUSHHUB_CONFIG": path]).config.loops == 3)
        #expect(try HubOptions.parse(["--check-config", path], environment: [:]).checkOnly)

        try #"{"keep_verisons": 4}"#.write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            try HubOptions.parse(["--config", path], environment: [:])
        } throws: { error in
            "\(error)".contains("keep_verisons") && "\(error)".contains("keep_versions")
        }
        try #"{"loops": 0}"#.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: HubOptions.UsageError.self) { try HubOptions.parse(["--check-config", path], environment: [:]) }
        try #"{"loops": [1]}"#.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: HubOptions.UsageError.self) { try HubOptions.parse(["--config", path], environment: [:]) }
    }

    @Test("the push flags: APNs's three together, https URLs, a bounded queue; each refusal names the flag")
    func push() throws {
        #expect(try !HubOptions.parse([], environment: [:]).config.push.apnsConfigured)
        let refusals: [([String], String)] = [
            (["--apns-key", "/k.p8"], "--apns-key-id and --apns-team"),
            (["--apns-key", "/k.p8", "--apns-team", "T"], "--apns-key-id"),
            (["--apns-url", "http://api.push.apple.com"], "--apns-url"),
            (["--fcm-url", "https://host/path"], "--fcm-url"),
            (["--fcm-url", "https://host:0"], "--fcm-url"),
            (["--push-queue", "0"], "--push-queue"),
        ]
        for (flags, named) in refusals {
            #expect("\(flags)") {
                try HubOptions.parse(flags, environment: [:])
            } throws: { "\($0)".contains(named) }
        }
        let ipv6 = try HubOptions.parse(["--apns-url", "https://[::1]:9443"], environment: [:]).config.push
        #expect(ipv6.apnsEndpoint == PushEndpoint(host: "::1", port: 9443) && ipv6.apnsEndpoint.authority == "[::1]:9443")
    }

    @Test("--redis takes a Redis URL from a flag or PUSHHUB_REDIS; anything else is refused, saying why")
    func redis() throws {
        #expect(try HubOptions.parse([], environment: [:]).config.redis == nil)
        #expect(try HubOptions.parse(["--redis", "redis://127.0.0.1:7000"], environment: [:]).config.redis?.port == 7000)
        #expect(try HubOptions.parse([], environment: ["PUSHHUB_REDIS": "redis://r/3"]).config.redis?.database == 3)
        let sentinel = try HubOptions.parse(["--redis-sentinel", "127.0.0.1:26379", "--redis-master", "m"], environment: [:])
        #expect(sentinel.config.redisSentinels.count == 1 && sentinel.config.redis != nil)
        for flags in [["--redis-sentinel", "127.0.0.1:26379"], ["--redis-master", "m"], ["--redis-sentinel", "x", "--redis-master", "m"]] {
            #expect(throws: HubOptions.UsageError.self) { try HubOptions.parse(flags, environment: [:]) }
        }
        #expect(try HubOptions.parse(["--redis", "rediss://r"], environment: [:]).config.redisTLS?.caFile == nil)
        #expect {
            try HubOptions.parse(["--redis", "redis://r", "--redis-ca", "/etc/hostname"], environment: [:])
        } throws: { "\($0)".contains("use a rediss:// URL") }
        #expect {
            try HubOptions.parse(["--redis", "rediss://r", "--redis-ca", "/nonexistent.pem"], environment: [:])
        } throws: { "\($0)".contains("--redis-ca") && "\($0)".contains("/nonexistent.pem") }
        #expect {
            try HubOptions.parse(["--outbound-ca", "/nonexistent.pem"], environment: [:])
        } throws: { "\($0)".contains("--outbound-ca") && "\($0)".contains("/nonexistent.pem") }
        #expect(try HubOptions.parse([], environment: [:]).config.outboundCAFile == nil)
        for (value, expected) in [("localhost:6379", "not a Redis URL"), ("redis://h:0", "port")] {
            #expect {
                try HubOptions.parse(["--redis", value], environment: [:])
            } throws: { error in
                "\(error)".hasPrefix("--redis: ") && "\(error)".contains(expected)
            }
        }
    }

    @Test("a reload applies the limits and timeouts and keeps what needs a restart")
    func reload() {
        var running = HubConfig()
        running.keepVersions = 4
        var new = running
        new.maxSubscriptions = 9
        new.allowedOrigins = ["https://a.example"]
        new.idleTimeout = .seconds(90)
        new.keepVersions = 8
        new.listen = SocketAddress(host: "127.0.0.1", port: 1)
        let (config, changed, needRestart) = ConfigReload.applying(new, to: running)
        #expect(config.maxSubscriptions == 9 && config.allowedOrigins == ["https://a.example"])
        #expect(config.idleTimeout == .seconds(90))
        #expect(config.keepVersions == 4 && config.listen == running.listen)
        #expect(Set(changed) == ["max_subscriptions", "allowed_origins", "idle_timeout"])
        #expect(Set(needRestart) == ["keep_versions", "listen"])
        #expect(ConfigReload.applying(running, to: running).changed.isEmpty)
    }
}
