import Testing

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
            ["--idle-timeout", "5"], ["--config", "hub.json"], ["--jwt-require-exp=maybe"],
            ["--message-rate", "fast"], ["--message-rate", "10/m"], ["--message-rate", "-1"], ["--message-burst", "0"],
        ] {
            #expect(throws: HubOptions.UsageError.self) { try HubOptions.parse(arguments, environment: [:]) }
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
}
