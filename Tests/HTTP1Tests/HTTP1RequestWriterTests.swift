import HTTP1
import Testing

@Suite struct HTTP1RequestWriterTests {
    let writer = HTTP1RequestWriter(userAgent: "PushHub/test")
    let origin = HTTPOrigin(isTLS: true, host: "hooks.example.com", port: 443)

    func text(_ request: HTTP1Request, to origin: HTTPOrigin? = nil) throws -> String {
        String(decoding: try writer.write(request, to: origin ?? self.origin), as: UTF8.self)
    }

    @Test("a POST: request line, Host, the caller's fields, User-Agent, Content-Length, body")
    func post() throws {
        let request = HTTP1Request(
            method: "POST", target: "/hook?x=1", headers: [("Content-Type", "application/json")],
            body: Array(#"{"a":1}"#.utf8))
        #expect(
            try text(request)
                == "POST /hook?x=1 HTTP/1.1\r\nHost: hooks.example.com\r\nContent-Type: application/json\r\n"
                + "User-Agent: PushHub/test\r\nContent-Length: 7\r\n\r\n{\"a\":1}")
    }

    @Test("a GET has no Content-Length; a POST without a body has Content-Length: 0")
    func lengths() throws {
        #expect(
            try text(HTTP1Request(method: "GET", target: "/jwks"))
                == "GET /jwks HTTP/1.1\r\nHost: hooks.example.com\r\nUser-Agent: PushHub/test\r\n\r\n")
        #expect(try text(HTTP1Request(method: "POST", target: "/")).contains("\r\nContent-Length: 0\r\n\r\n"))
    }

    @Test("Host carries a port other than the scheme's, and an IPv6 literal's brackets")
    func host() throws {
        let get = HTTP1Request(method: "GET", target: "/")
        #expect(
            try text(get, to: HTTPOrigin(isTLS: false, host: "[::1]", port: 8080)).contains("\r\nHost: [::1]:8080\r\n"))
        #expect(
            try text(get, to: HTTPOrigin(isTLS: false, host: "a.example", port: 80)).contains("\r\nHost: a.example\r\n")
        )
        #expect(
            try text(get, to: HTTPOrigin(isTLS: true, host: "a.example", port: 80)).contains(
                "\r\nHost: a.example:80\r\n"))
    }

    @Test("the caller's Host, Content-Length, Transfer-Encoding and Connection are dropped; its User-Agent kept")
    func writerFields() throws {
        let request = HTTP1Request(
            method: "POST", target: "/",
            headers: [
                ("host", "evil.example"), ("Content-Length", "999"), ("Transfer-Encoding", "chunked"),
                ("Connection", "close"), ("User-Agent", "PushHub/9.9"),
            ], body: [1, 2])
        let written = try text(request)
        #expect(
            written
                == "POST / HTTP/1.1\r\nHost: hooks.example.com\r\nUser-Agent: PushHub/9.9\r\nContent-Length: 2\r\n\r\n\u{1}\u{2}"
        )
    }

    @Test(
        "CR, LF, NUL and other control characters in a field, a bad name, method or target are refused",
        arguments: [
            (HTTP1Request(method: "POST", target: "/", headers: [("X", "a\r\nEvil: 1")]), "value of the header X"),
            (HTTP1Request(method: "POST", target: "/", headers: [("X", "a\nb")]), "value of the header X"),
            (HTTP1Request(method: "POST", target: "/", headers: [("X", "a\u{0}b")]), "value of the header X"),
            (HTTP1Request(method: "POST", target: "/", headers: [("X", "a\rb")]), "value of the header X"),
            (HTTP1Request(method: "POST", target: "/", headers: [("X", "a\u{7F}")]), "value of the header X"),
            (HTTP1Request(method: "POST", target: "/", headers: [("X\r\nY", "1")]), "header name"),
            (HTTP1Request(method: "POST", target: "/", headers: [("X Y", "1")]), "header name"),
            (HTTP1Request(method: "POST", target: "/", headers: [("", "1")]), "header name"),
            (HTTP1Request(method: "POST", target: "/", headers: [("X:", "1")]), "header name"),
            (HTTP1Request(method: "GET /x HTTP/1.0\r\n", target: "/"), "method"),
            (HTTP1Request(method: "", target: "/"), "method"),
            (HTTP1Request(method: "GET", target: "/a b"), "request target"),
            (HTTP1Request(method: "GET", target: "http://x/"), "request target"),
            (HTTP1Request(method: "GET", target: "/\r\nX: y"), "request target"),
            (HTTP1Request(method: "GET", target: ""), "request target"),
        ])
    func refused(_ request: HTTP1Request, _ expected: String) {
        #expect {
            try writer.write(request, to: origin)
        } throws: { error in
            "\(error)".contains(expected) && !"\(error)".contains("\r") && !"\(error)".contains("\n")
        }
    }

    @Test("a User-Agent default with a control character is refused too")
    func badUserAgent() {
        let writer = HTTP1RequestWriter(userAgent: "a\r\nb")
        #expect(throws: HTTP1RequestError.badFieldValue(name: "User-Agent")) {
            try writer.write(HTTP1Request(method: "GET", target: "/"), to: origin)
        }
    }

    @Test("HTAB and obs-text are allowed in values")
    func allowedValues() throws {
        let request = HTTP1Request(method: "GET", target: "/", headers: [("X", "a\tb é")])
        #expect(try text(request).contains("\r\nX: a\tb é\r\n"))
    }
}
