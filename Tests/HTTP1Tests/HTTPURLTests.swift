import HTTP1
import Testing

@Suite struct HTTPURLTests {
    @Test func anHTTPSURLHasItsDefaultPortAndTarget() throws {
        let url = try HTTPURL(parsing: "https://hooks.example.com")
        #expect(url.origin == HTTPOrigin(isTLS: true, host: "hooks.example.com", port: 443))
        #expect(url.target == "/")
    }
}
