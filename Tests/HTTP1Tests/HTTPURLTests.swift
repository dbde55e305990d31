import HTTP1
import Testing

@Suite struct HTTPURLTests {
    @Test func anHTTPSURLHasItsDefaultPortAndTarget() throws {
        let url = try HTTPURL(parsing: "https://hooks.example.com")
        #expect(url.origin == HTTPOrigin(isTLS: true, host: "hooks.example.com", port: 443))
        #expect(url.target == "/")
    }

    @Test(
        "good URLs: origin and target",
        arguments: [
            ("http://127.0.0.1:8080/jwks.json", false, "127.0.0.1", 8080, "/jwks.json"),
            (
                "HTTPS://Login.Example.COM/.well-known/jwks.json", true, "login.example.com", 443,
                "/.well-known/jwks.json"
            ),
            ("https://[::1]:8443/hook", true, "[::1]", 8443, "/hook"),
            ("http://[2001:DB8::a:1]/", false, "[2001:db8::a:1]", 80, "/"),
            ("http://[::ffff:10.0.0.1]:1/x", false, "[::ffff:10.0.0.1]", 1, "/x"),
            ("https://hooks.example.com?x=1", true, "hooks.example.com", 443, "/?x=1"),
            ("https://h.example:65535/a%2Fb/c?q=%C3%A9&r=a:b@c", true, "h.example", 65535, "/a%2Fb/c?q=%C3%A9&r=a:b@c"),
            ("http://localhost:9/", false, "localhost", 9, "/"),
            ("https://my_host.internal/", true, "my_host.internal", 443, "/"),
            ("http://[1:2:3:4:5:6:7:8]/", false, "[1:2:3:4:5:6:7:8]", 80, "/"),
            ("http://[1:2:3:4:5:6:7::]/", false, "[1:2:3:4:5:6:7::]", 80, "/"),
            ("http://[::]/", false, "[::]", 80, "/"),
            ("http://[::1.2.3.4]/", false, "[::1.2.3.4]", 80, "/"),
            ("http://[1:2:3:4:5:6:1.2.3.4]/", false, "[1:2:3:4:5:6:1.2.3.4]", 80, "/"),
        ])
    func good(_ text: String, _ isTLS: Bool, _ host: String, _ port: Int, _ target: String) throws {
        let url = try HTTPURL(parsing: text)
        #expect(url.origin == HTTPOrigin(isTLS: isTLS, host: host, port: UInt16(port)))
        #expect(url.target == target)
        #expect(try HTTPURL(parsing: url.description) == url, "\(url) parses back to itself")
    }

    @Test(
        "bad URLs are refused with a sentence naming the problem",
        arguments: [
            ("ftp://example.com/", "not an http:// or https:// URL"),
            ("example.com/jwks", "not an http:// or https:// URL"),
            ("https://user:pw@example.com/", "user info"),
            ("https://example.com@evil.example/", "user info"),
            ("https://example.com/a#frag", "fragment"),
            ("https://example.com/a b", "space"),
            ("https://example.com/\u{0}", "control character"),
            ("https://example.com/\r\nHost: evil", "control character"),
            ("https://example.com/é", "outside ASCII"),
            ("https://example.com:0/", "bad port"),
            ("https://example.com:65536/", "bad port"),
            ("https://example.com:/", "bad port"),
            ("https://example.com:80a/", "bad port"),
            ("https://example.com:-1/", "bad port"),
            ("https://example.com:1:2/", "bad port"),
            ("https://:443/", "no host"),
            ("https:///path", "no host"),
            ("https://[::1/", "closing ]"),
            ("https://[::1]x/", "after its IPv6 literal"),
            ("https://[1:2:3:4:5:6:7:8:9]/", "IPv6"),
            ("https://[1::2::3]/", "IPv6"),
            ("https://[fe80::1%25eth0]/", "IPv6"),
            ("https://[::g]/", "IPv6"),
            ("https://[1::2:3:4:5:6:7:8]/", "IPv6"),
            ("https://[1:2:3:4:5:6:7]/", "IPv6"),
            ("https://[:1:2:3:4:5:6:7]/", "IPv6"),
            ("https://[1:2:3:4:5:6:7:]/", "IPv6"),
            ("https://[:::1]/", "IPv6"),
            ("https://[1.2.3.4::]/", "IPv6"),
            ("https://[::1.2.3]/", "IPv6"),
            ("https://[12345::1]/", "IPv6"),
            ("https://[]/", "IPv6"),
            ("https://[v1.x]/", "IPv6"),
            ("https://::1/", "bad port"),
            ("https://exa mple.com/", "space"),
            ("https://exa%6Dple.com/", "bad host"),
            ("https://-example.com/", "bad host"),
            ("https://a..b/", "bad host"),
            ("https://.example.com/", "bad host"),
            ("https://127.1/", "bad host"),
            ("https://0x7f.0.0.1/", "bad host"),
            ("https://127.000.0.1/", "bad host"),
            ("https://256.0.0.1/", "bad host"),
            ("https://example.com/%zz", "bad path"),
            ("https://example.com/%4", "bad path"),
            ("https://example.com/a\"b", "bad path"),
            ("https://example.com/a<b>", "bad path"),
            ("https://example.com/{x}", "bad path"),
        ])
    func bad(_ text: String, _ expected: String) {
        #expect {
            try HTTPURL(parsing: text)
        } throws: { error in
            "\(error)".contains(expected)
        }
    }

    @Test("a refusal shows control characters escaped, never raw")
    func printableRefusal() {
        #expect {
            try HTTPURL(parsing: "https://example.com/\r\n")
        } throws: { error in
            "\(error)".contains("\\r\\n") && !"\(error)".contains("\r")
        }
    }

    @Test(
        "loopback: localhost, 127.0.0.0/8 and ::1 only",
        arguments: [
            ("http://localhost/", true), ("http://127.0.0.1:1/", true), ("http://127.255.0.9/", true),
            ("http://[::1]/", true), ("http://[0:0:0:0:0:0:0:1]/", true), ("http://[::2]/", false),
            ("http://128.0.0.1/", false), ("http://localhost.example.com/", false), ("http://example.com/", false),
            ("http://127.example.com/", false), ("http://[::]/", false),
        ])
    func loopback(_ text: String, _ expected: Bool) throws {
        #expect(try HTTPURL(parsing: text).isLoopback == expected)
    }

    @Test("the authority leaves out the scheme's default port")
    func authority() throws {
        #expect(try HTTPURL(parsing: "https://a.example/").origin.authority == "a.example")
        #expect(try HTTPURL(parsing: "https://a.example:80/").origin.authority == "a.example:80")
        #expect(try HTTPURL(parsing: "http://[::1]:8080/").origin.authority == "[::1]:8080")
        #expect(try HTTPURL(parsing: "http://a.example/").description == "http://a.example/")
    }
}
