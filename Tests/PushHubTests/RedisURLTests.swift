import Testing

@testable import PushHub

@Suite struct RedisURLTests {
    @Test("reads host, port, credentials and database")
    func parses() throws {
        let plain = try RedisURL("redis://127.0.0.1:6380/2")
        #expect(plain.host == "127.0.0.1" && plain.port == 6380 && plain.database == 2)
        #expect(plain.user == nil && plain.password == nil && !plain.usesTLS)

        let defaults = try RedisURL("redis://redis.internal")
        #expect(defaults.port == 6379 && defaults.database == 0)

        let acl = try RedisURL("redis://hub:s%40cret%3A1@10.0.0.5:6379/0")
        #expect(acl.user == "hub" && acl.password == "s@cret:1" && acl.host == "10.0.0.5")

        let passwordOnly = try RedisURL("redis://:pw@localhost")
        #expect(passwordOnly.user == nil && passwordOnly.password == "pw")
        let legacy = try RedisURL("redis://pw@localhost")
        #expect(legacy.user == nil && legacy.password == "pw")

        let ipv6 = try RedisURL("rediss://[::1]:7000/1")
        #expect(ipv6.host == "[::1]" && ipv6.port == 7000 && ipv6.database == 1 && ipv6.usesTLS)
    }

    @Test("the password never shows in its description")
    func masksPassword() throws {
        #expect(try RedisURL("redis://hub:topsecret@h:1/3").description == "redis://hub:***@h:1/3")
        #expect(try RedisURL("redis://h").description == "redis://h:6379/0")
    }

    @Test("a value that is not a Redis URL says what is expected", arguments: [
        ("http://localhost", "is not a Redis URL"),
        ("redis://", "names no host"),
        ("redis://h:0", "port \"0\""),
        ("redis://h:99999", "port \"99999\""),
        ("redis://h:abc", "port \"abc\""),
        ("redis://h/-1", "database \"-1\""),
        ("redis://h/x", "database \"x\""),
        ("redis://h?timeout=1", "query parameters"),
        ("redis://u:%zz@h", "two hex digits"),
        ("redis://[::1", "no \"]\""),
    ])
    func refuses(_ text: String, _ expected: String) {
        #expect(throws: RedisURL.ParseError.self) { try RedisURL(text) }
        do {
            _ = try RedisURL(text)
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }
}
