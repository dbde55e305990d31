import Foundation
import HTTP1
import Sockets
import TestSupport
import Testing

@testable import PushHub

/// The HTTP/1.1 client against real servers on loopback: Python's `http.server` (HTTP/1.1
/// keep-alive, and HTTP/1.0 with bodies that end at the close), nginx and `openssl s_server`
/// over TLS, and a raw socket server scripted per path (chunked bodies cut at odd places,
/// interim responses, stalls, closes mid-body, Content-Length with Transfer-Encoding).
@Suite(.serialized) struct HTTP1ClientTests {
    struct SetupFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Outcomes by the order requests were sent, and the order they ended in.
    final class Outcomes {
        var byIndex: [Int: HTTP1Outcome] = [:]
        var order: [Int] = []
        var count: Int { byIndex.count }

        func record(_ index: Int) -> (HTTP1Outcome) -> Void {
            { outcome in
                precondition(self.byIndex[index] == nil, "done is called once per request")
                self.byIndex[index] = outcome
                self.order.append(index)
            }
        }

        func response(_ index: Int) -> HTTP1Response? {
            guard case .response(let response) = byIndex[index] else { return nil }
            return response
        }

        func failure(_ index: Int) -> String? {
            guard case .failed(let reason) = byIndex[index] else { return nil }
            return reason
        }
    }

    /// One of the scripted Python servers (see `script`): `http11`, `http10` or `raw`.
    final class PythonServer {
        let port: Int
        let origin: HTTPOrigin
        private let process: Process

        static let script = #"""
            import http.server, json, socket, sys, threading, time, urllib.parse

            mode = sys.argv[1]
            host = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            stats = {"connections": 0, "open": 0, "max_open": 0, "requests": {}, "closed_after": []}
            lock = threading.Lock()


            def count_request(path):
                with lock:
                    stats["requests"][path] = stats["requests"].get(path, 0) + 1


            def opened():
                with lock:
                    stats["connections"] += 1
                    stats["open"] += 1
                    stats["max_open"] = max(stats["max_open"], stats["open"])


            def closed():
                with lock:
                    stats["open"] -= 1


            def stats_body():
                with lock:
                    return json.dumps(stats).encode()


            class Handler(http.server.BaseHTTPRequestHandler):
                """http11: keep-alive, every answer with a Content-Length. http10: HTTP/1.0, bodies end at the close."""

                protocol_version = "HTTP/1.1" if mode == "http11" else "HTTP/1.0"

                def setup(self):
                    super().setup()
                    opened()

                def finish(self):
                    super().finish()
                    closed()

                def log_message(self, *args):
                    pass

                def answer(self, status, body, length=True):
                    self.send_response(status)
                    self.send_header("Content-Type", "text/plain")
                    if length:
                        self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(body)

                def do_GET(self):
                    url = urllib.parse.urlsplit(self.path)
                    query = urllib.parse.parse_qs(url.query)
                    if url.path == "/stats":
                        return self.answer(200, stats_body())
                    count_request(url.path)
                    if url.path == "/slow":
                        time.sleep(int(query.get("ms", ["20"])[0]) / 1000)
                    if url.path == "/big":
                        return self.answer(200, b"x" * int(query["n"][0]), length=mode == "http11")
                    body = f"{mode} {self.path} {self.headers.get('Host')} {self.headers.get('User-Agent')}\n".encode()
                    self.answer(200, body, length=mode == "http11")

                do_HEAD = do_GET

                def do_POST(self):
                    count_request(self.path)
                    body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                    self.answer(201, body, length=mode == "http11")


            RAW_SCRIPTS = {
                # A chunked body cut at odd places, trailers, then the connection stays for the next request.
                "/chunked-odd": [
                    b"HTTP/1.1 200 OK\r\nTransfer-Enc", b"oding: chunked\r", b"\n\r\n5", b"\r\nhel", b"lo\r",
                    b"\n1;ext=\"a b\"\r\n,\r", b"\nC\r\n world, onc", b"e\r\n0\r\nX-Trailer: 1", b"\r\n", b"\r\n",
                ],
                "/interim": [
                    b"HTTP/1.1 100 Continue\r\n\r\n",
                    b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n",
                    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfinal",
                ],
                "/cl-te": [b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"],
                "/big": [b"HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n" + b"b" * 2000],
                "/close-later": [b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nsoon"],
                "/garbage-after": [b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n"],
            }


            def serve_raw(sock):
                """Reads request heads; answers each by its path's script."""
                opened()
                buffer = b""
                last = None
                try:
                    while True:
                        while b"\r\n\r\n" not in buffer:
                            data = sock.recv(65536)
                            if not data:
                                if last:
                                    with lock:
                                        stats["closed_after"].append(last)
                                return
                            buffer += data
                        head, buffer = buffer.split(b"\r\n\r\n", 1)
                        path = head.split(b" ")[1].decode()
                        last = path
                        if path == "/stats":
                            body = stats_body()
                            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                            continue
                        count_request(path)
                        if path == "/stall":
                            continue  # never answered; the next request on this connection is read though
                        if path == "/close-after-request":
                            return
                        if path == "/close-mid-body":
                            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
                            time.sleep(0.05)
                            return
                        for piece in RAW_SCRIPTS[path]:
                            sock.sendall(piece)
                            time.sleep(0.005)
                        if path == "/close-later":
                            time.sleep(0.05)
                            return
                finally:
                    closed()
                    sock.close()


            if mode in ("http11", "http10"):
                http.server.ThreadingHTTPServer.address_family = family
                server = http.server.ThreadingHTTPServer((host, 0), Handler)
                server.daemon_threads = True
                print(server.server_address[1], flush=True)
                server.serve_forever()
            else:
                listener = socket.socket(family)
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                listener.bind((host, 0))
                listener.listen(64)
                print(listener.getsockname()[1], flush=True)
                while True:
                    sock, _ = listener.accept()
                    threading.Thread(target=serve_raw, args=(sock,), daemon=True).start()
            """#

        init(_ mode: String, host: String = "127.0.0.1") throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            process = Process()
            process.executableURL = URL(fileURLWithPath: root.appendingPathComponent(".venv/bin/python").path)
            process.arguments = ["-c", Self.script, mode, host]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                guard !chunk.isEmpty else { break }
                line.append(chunk)
            }
            guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            else {
                throw SetupFailure(description: "the \(mode) server did not start")
            }
            self.port = port
            origin = HTTPOrigin(isTLS: false, host: host.contains(":") ? "[\(host)]" : host, port: UInt16(port))
        }

        deinit {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
    }

    /// nginx over TLS on a free loopback port (keep-alive), serving `hello.txt` and its
    /// `stub_status` at /status.
    final class Nginx {
        let port: Int
        let directory: String
        let certificate: String
        let origin: HTTPOrigin
        private let process: Process

        init() throws {
            let port = try RedisServer.freePort()
            let directory = NSTemporaryDirectory() + "pushhub-nginx-\(getpid())-\(port)"
            self.port = port
            self.directory = directory
            let key: String
            (certificate, key) = try SelfSignedCertificate.make(in: directory)
            try FileManager.default.createDirectory(atPath: directory + "/htdocs", withIntermediateDirectories: true)
            try Data("hello\n".utf8).write(to: URL(fileURLWithPath: directory + "/htdocs/hello.txt"))
            let temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map {
                "\($0)_temp_path \(directory)/\($0);"
            }
            let config = """
                daemon off; master_process off; worker_processes 1; pid \(directory)/nginx.pid;
                error_log \(directory)/error.log;
                events { worker_connections 64; }
                http {
                    access_log off; \(temp.joined(separator: " "))
                    server {
                        listen 127.0.0.1:\(port) ssl; ssl_certificate \(certificate); ssl_certificate_key \(key);
                        root \(directory)/htdocs; location = /status { stub_status; }
                    }
                }
                """
            try Data(config.utf8).write(to: URL(fileURLWithPath: directory + "/nginx.conf"))
            process = Process()
            process.executableURL = URL(fileURLWithPath: try RedisServer.executable("nginx"))
            process.arguments = ["-c", directory + "/nginx.conf", "-p", directory, "-e", directory + "/error.log"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            origin = HTTPOrigin(isTLS: true, host: "127.0.0.1", port: UInt16(port))
            try HTTP2LinkTests.waitUntilListening(port)
        }

        deinit {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    static func client(caFile: String? = nil, _ configure: (inout HTTP1Client.Options) -> Void = { _ in }) throws
        -> HTTP1Client
    {
        var options = HTTP1Client.Options(tls: try HTTP1Client.tlsContext(caFile: caFile))
        configure(&options)
        return HTTP1Client(options: options)
    }

    /// Sends one request and drives the client until it ends.
    static func fetch(
        _ client: HTTP1Client, _ origin: HTTPOrigin, _ path: String, method: String = "GET",
        timeout: UInt64 = 5_000_000_000, body: [UInt8] = [], maxBody: Int = HTTP1Request.defaultMaxResponseBodyBytes
    ) -> HTTP1Outcome? {
        var outcome: HTTP1Outcome?
        let request = HTTP1Request(method: method, target: path, body: body, maxResponseBodyBytes: maxBody)
        client.send(request, to: origin, timeout: timeout, now: MonotonicClock.now()) { outcome = $0 }
        PollDriver(client.sources).run(for: .seconds(10)) { outcome != nil }
        return outcome
    }

    static func text(_ outcome: HTTP1Outcome?) -> String {
        switch outcome {
        case .response(let response)?: "\(response.status) " + String(decoding: response.body, as: UTF8.self)
        case .failed(let reason)?: "failed: \(reason)"
        case nil: "no outcome"
        }
    }

    /// A Python server's counts, fetched through `client`.
    static func stats(_ client: HTTP1Client, _ server: PythonServer) throws -> [String: Any] {
        guard case .response(let response)? = fetch(client, server.origin, "/stats") else {
            throw SetupFailure(description: "no stats from \(server.origin)")
        }
        return try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] ?? [:]
    }

    /// The paths after which the client closed a raw server's connection, once one is seen (the
    /// server's thread may not have read the close yet when asked first).
    static func closedAfter(_ client: HTTP1Client, _ server: PythonServer) throws -> [String] {
        var closedAfter: [String] = []
        for _ in 0..<100 where closedAfter.isEmpty {
            closedAfter = try stats(client, server)["closed_after"] as? [String] ?? []
        }
        return closedAfter
    }

    static func requests(_ stats: [String: Any], _ path: String) -> Int {
        (stats["requests"] as? [String: Int])?[path] ?? 0
    }

    // MARK: - Real servers

    @Test("HTTP/1.1 keep-alive: 20 requests in turn share one connection; Host and User-Agent are sent")
    func keepAlive() throws {
        let server = try PythonServer("http11")
        let client = try Self.client()
        defer { client.close() }
        for _ in 0..<20 {
            let outcome = Self.text(Self.fetch(client, server.origin, "/hello?x=1"))
            #expect(outcome == "200 http11 /hello?x=1 127.0.0.1:\(server.port) PushHub/\(BuildInfo.version)\n")
        }
        #expect(client.connections(to: server.origin) == 1)
        let stats = try Self.stats(client, server)
        #expect(stats["connections"] as? Int == 1 && Self.requests(stats, "/hello") == 20, "\(stats)")
    }

    @Test("HTTP/1.0: a body without a length ends at the close; each request gets a new connection")
    func http10() throws {
        let server = try PythonServer("http10")
        let client = try Self.client()
        defer { client.close() }
        for _ in 0..<3 {
            guard case .response(let response)? = Self.fetch(client, server.origin, "/big?n=300000") else {
                Issue.record("no response")
                return
            }
            #expect(response.status == 200 && response.body == [UInt8](repeating: UInt8(ascii: "x"), count: 300_000))
            #expect(response.header("Content-Length") == nil)
            #expect(client.connections(to: server.origin) == 0)
        }
        #expect(try Self.stats(client, server)["connections"] as? Int == 4)
    }

    @Test("a POST body goes out whole; HEAD reads no body and keeps the connection")
    func postAndHead() throws {
        let server = try PythonServer("http11")
        let client = try Self.client()
        defer { client.close() }
        var generator = SeededGenerator(state: 31)
        let body = (0..<(300 << 10)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        guard case .response(let echoed)? = Self.fetch(client, server.origin, "/echo", method: "POST", body: body)
        else {
            Issue.record("no response to the POST")
            return
        }
        #expect(echoed.status == 201 && echoed.body == body)
        guard case .response(let head)? = Self.fetch(client, server.origin, "/hello", method: "HEAD") else {
            Issue.record("no response to the HEAD")
            return
        }
        #expect(head.status == 200 && head.body.isEmpty && Int(head.header("Content-Length") ?? "") ?? 0 > 0)
        #expect(Self.text(Self.fetch(client, server.origin, "/hello")).hasPrefix("200 http11 /hello"))
        #expect(try Self.stats(client, server)["connections"] as? Int == 1)
    }

    @Test("TLS keep-alive to nginx, trusting its certificate through the CA file")
    func tlsNginx() throws {
        let nginx = try Nginx()
        let client = try Self.client(caFile: nginx.certificate)
        defer { client.close() }
        for _ in 0..<10 { #expect(Self.text(Self.fetch(client, nginx.origin, "/hello.txt")) == "200 hello\n") }
        let status = Self.text(Self.fetch(client, nginx.origin, "/status"))
        // "server accepts handled requests\n 2 2 11": the probe that waited for nginx to listen,
        // and one connection that carried all 11 requests.
        #expect(status.contains("\n 2 2 11 \n"), "\(status)")
    }

    @Test("TLS to openssl s_server -www: an HTTP/1.0 answer whose body ends with the connection")
    func tlsServerWWW() throws {
        let port = try RedisServer.freePort()
        let directory = NSTemporaryDirectory() + "pushhub-www-\(getpid())-\(port)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (certificate, key) = try SelfSignedCertificate.make(in: directory)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        server.arguments = ["s_server", "-accept", String(port), "-cert", certificate, "-key", key, "-www", "-quiet"]
        server.standardInput = Pipe()
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            if server.isRunning { kill(server.processIdentifier, SIGKILL) }
            server.waitUntilExit()
        }
        try HTTP2LinkTests.waitUntilListening(port)
        let client = try Self.client(caFile: certificate)
        defer { client.close() }
        let origin = HTTPOrigin(isTLS: true, host: "localhost", port: UInt16(port))
        guard case .response(let response)? = Self.fetch(client, origin, "/") else {
            Issue.record("no response from s_server")
            return
        }
        #expect(response.status == 200 && String(decoding: response.body, as: UTF8.self).contains("<HTML>"))
        #expect(client.connections(to: origin) == 0)
    }

    @Test("a certificate not signed by the --outbound-ca file fails, naming the certificate problem")
    func untrustedCertificate() throws {
        let nginx = try Nginx()
        let other = try SelfSignedCertificate.make(in: nginx.directory + "/other")
        let client = try Self.client(caFile: other.certificate)
        defer { client.close() }
        let outcome = Self.text(Self.fetch(client, nginx.origin, "/hello.txt"))
        #expect(
            outcome.contains("the certificate of 127.0.0.1:\(nginx.port) is not trusted (self-signed certificate)")
                && outcome.contains("--outbound-ca"), "\(outcome)")
        #expect(client.connections(to: nginx.origin) == 0)
    }

    // MARK: - A scripted raw server

    @Test("a chunked body cut at odd places, with extensions and trailers; 100 and 103 skipped; one connection")
    func chunkedAndInterim() throws {
        let server = try PythonServer("raw")
        let client = try Self.client()
        defer { client.close() }
        #expect(Self.text(Self.fetch(client, server.origin, "/chunked-odd")) == "200 hello, world, once")
        #expect(Self.text(Self.fetch(client, server.origin, "/interim")) == "200 final")
        #expect(Self.text(Self.fetch(client, server.origin, "/chunked-odd")) == "200 hello, world, once")
        #expect(try Self.stats(client, server)["connections"] as? Int == 1)
    }

    @Test("a server that never answers: the request fails at its timeout, and its connection is closed")
    func stall() throws {
        let server = try PythonServer("raw")
        let client = try Self.client()
        defer { client.close() }
        let start = MonotonicClock.now()
        let outcome = Self.text(Self.fetch(client, server.origin, "/stall", timeout: 300_000_000))
        let elapsed = MonotonicClock.now() - start
        #expect(outcome == "failed: no response from 127.0.0.1:\(server.port) within 0.3 s")
        #expect(elapsed >= 300_000_000 && elapsed < 1_300_000_000, "done \(elapsed / 1_000_000) ms after send")
        #expect(client.connections(to: server.origin) == 0)
        #expect(try Self.closedAfter(client, server) == ["/stall"])
    }

    @Test("a close in the middle of the body fails the request, saying how far it got")
    func closeMidBody() throws {
        let server = try PythonServer("raw")
        let client = try Self.client()
        defer { client.close() }
        #expect(
            Self.text(Self.fetch(client, server.origin, "/close-mid-body"))
                == "failed: 127.0.0.1:\(server.port): the server closed the connection after 10 of 100 bytes of the "
                + "response body")
    }

    @Test("Content-Length with Transfer-Encoding is refused and the connection closed")
    func contentLengthWithTransferEncoding() throws {
        let server = try PythonServer("raw")
        let client = try Self.client()
        defer { client.close() }
        let outcome = Self.text(Self.fetch(client, server.origin, "/cl-te"))
        #expect(outcome.contains("both Content-Length and Transfer-Encoding"), "\(outcome)")
        #expect(client.connections(to: server.origin) == 0)
        #expect(try Self.closedAfter(client, server) == ["/cl-te"])
    }

    @Test("a body over the request's bound fails; bytes after a response keep its connection from reuse")
    func boundsAndLeftovers() throws {
        let server = try PythonServer("raw")
        let client = try Self.client()
        defer { client.close() }
        #expect(
            Self.text(Self.fetch(client, server.origin, "/big", maxBody: 1000))
                == "failed: 127.0.0.1:\(server.port): the response body is longer than 1000 bytes")
        #expect(Self.text(Self.fetch(client, server.origin, "/big", maxBody: 2000)).count == 2004)
        #expect(Self.text(Self.fetch(client, server.origin, "/garbage-after")) == "200 ok")
        #expect(client.connections(to: server.origin) == 0)
    }

    @Test("the client never sends a request twice: one whose connection closes unanswered fails")
    func neverTwice() throws {
        let server = try PythonServer("raw")
        let client = try Self.client()
        defer { client.close() }
        #expect(
            Self.text(Self.fetch(client, server.origin, "/close-after-request"))
                == "failed: 127.0.0.1:\(server.port): the server closed the connection without answering")
        #expect(Self.requests(try Self.stats(client, server), "/close-after-request") == 1)
    }

    @Test("an idle connection the server closes is dropped; the next request opens another")
    func serverClosesIdle() throws {
        let server = try PythonServer("raw")
        let client = try Self.client()
        defer { client.close() }
        #expect(Self.text(Self.fetch(client, server.origin, "/close-later")) == "200 soon")
        #expect(client.connections(to: server.origin) == 1)
        #expect(PollDriver(client.sources).run(for: .seconds(5)) { client.connections(to: server.origin) == 0 })
        #expect(Self.text(Self.fetch(client, server.origin, "/interim")) == "200 final")
        #expect(try Self.stats(client, server)["connections"] as? Int == 2)
    }

    @Test("a connection idle for idleTimeout is closed")
    func idleTimeout() throws {
        let server = try PythonServer("http11")
        let client = try Self.client { $0.idleTimeout = 100_000_000 }
        defer { client.close() }
        #expect(Self.text(Self.fetch(client, server.origin, "/hello")).hasPrefix("200 "))
        let idleSince = MonotonicClock.now()
        #expect(PollDriver(client.sources).run(for: .seconds(5)) { client.connections(to: server.origin) == 0 })
        #expect(MonotonicClock.now() - idleSince >= 90_000_000)
    }

    // MARK: - Reaching servers

    @Test("nothing listening fails with the errno; an unknown host is named; localhost and [::1] are reached")
    func reaching() throws {
        let client = try Self.client()
        defer { client.close() }
        let port = try RedisServer.freePort()
        let refused = Self.text(
            Self.fetch(client, HTTPOrigin(isTLS: false, host: "127.0.0.1", port: UInt16(port)), "/"))
        #expect(refused.contains("cannot connect to 127.0.0.1:\(port)") && refused.contains("refused"), "\(refused)")
        let unknown = Self.text(
            Self.fetch(client, HTTPOrigin(isTLS: false, host: "no-such-host.invalid", port: 80), "/"))
        #expect(unknown.contains("no-such-host.invalid"), "\(unknown)")
        let server = try PythonServer("http11")
        let byName = HTTPOrigin(isTLS: false, host: "localhost", port: UInt16(server.port))
        #expect(
            Self.text(Self.fetch(client, byName, "/hello")).hasPrefix("200 http11 /hello localhost:\(server.port) "))
        let six = try PythonServer("http11", host: "::1")
        #expect(Self.text(Self.fetch(client, six.origin, "/hello")).hasPrefix("200 http11 /hello [::1]:\(six.port) "))
    }

    @Test("a request that cannot be written, or https without a TLS context, fails at once")
    func refusedAtOnce() throws {
        let client = HTTP1Client(options: .init(tls: nil))
        defer { client.close() }
        let outcomes = Outcomes()
        let origin = HTTPOrigin(isTLS: false, host: "127.0.0.1", port: 9)
        let bad = HTTP1Request(method: "POST", target: "/", headers: [("X-Evil", "a\r\nHost: evil")])
        client.send(bad, to: origin, timeout: 1_000_000_000, now: MonotonicClock.now(), done: outcomes.record(0))
        let tls = HTTPOrigin(isTLS: true, host: "127.0.0.1", port: 9)
        client.send(HTTP1Request(method: "GET", target: "/"), to: tls, timeout: 1, now: 0, done: outcomes.record(1))
        #expect(outcomes.failure(0)?.contains("the value of the header X-Evil holds a control character") == true)
        #expect(outcomes.failure(1) == "https://127.0.0.1:9: the outbound HTTP client has no TLS context")
        #expect(client.waitingCount == 0)
    }

    // MARK: - Sharing the slots

    @Test("two origins share the slots fairly: a burst to one does not starve the other")
    func fairness() throws {
        let a = try PythonServer("http11")
        let b = try PythonServer("http11")
        let client = try Self.client {
            $0.connections = 4
            $0.maxPerOrigin = 4
        }
        defer { client.close() }
        let outcomes = Outcomes()
        let now = MonotonicClock.now()
        for index in 0..<120 {
            let origin = index < 60 ? a.origin : b.origin
            let request = HTTP1Request(method: "GET", target: "/slow?ms=20")
            client.send(request, to: origin, timeout: 30_000_000_000, now: now, done: outcomes.record(index))
        }
        var most = 0
        #expect(
            PollDriver(client.sources).run(for: .seconds(30)) {
                most = max(most, client.connections(to: a.origin), client.connections(to: b.origin))
                return outcomes.count == 120
            })
        #expect((0..<120).allSatisfy { outcomes.response($0)?.status == 200 })
        // A FIFO client would answer A's 60 first; here B has about half of the first 40.
        let early = outcomes.order.prefix(40).filter { $0 >= 60 }.count
        #expect(early >= 14 && early <= 26, "\(early) of the first 40 answers went to B")
        #expect(most <= 4)
        let aStats = try Self.stats(client, a)
        let bStats = try Self.stats(client, b)
        #expect((aStats["max_open"] as? Int ?? 99) <= 4 && (bStats["max_open"] as? Int ?? 99) <= 4)
        #expect((aStats["connections"] as? Int ?? 99) <= 4, "A's connections stay open, not churned: \(aStats)")
    }

    @Test("at most maxPerOrigin connections to one origin")
    func maxPerOrigin() throws {
        let server = try PythonServer("http11")
        let client = try Self.client { $0.maxPerOrigin = 3 }
        defer { client.close() }
        let outcomes = Outcomes()
        for index in 0..<30 {
            let request = HTTP1Request(method: "GET", target: "/slow?ms=30")
            client.send(
                request, to: server.origin, timeout: 10_000_000_000, now: MonotonicClock.now(),
                done: outcomes.record(index))
        }
        #expect(PollDriver(client.sources).run(for: .seconds(10)) { outcomes.count == 30 })
        #expect((0..<30).allSatisfy { outcomes.response($0)?.status == 200 })
        let stats = try Self.stats(client, server)
        #expect(stats["max_open"] as? Int == 3 && stats["connections"] as? Int == 3, "\(stats)")
    }

    @Test("beyond maxWaiting, done fails at once with queue full; the others are answered")
    func queueBound() throws {
        let server = try PythonServer("http11")
        let client = try Self.client {
            $0.connections = 1
            $0.maxWaiting = 5
        }
        defer { client.close() }
        let outcomes = Outcomes()
        for index in 0..<8 {
            client.send(
                HTTP1Request(method: "GET", target: "/hello"), to: server.origin, timeout: 5_000_000_000,
                now: MonotonicClock.now(), done: outcomes.record(index))
        }
        #expect(outcomes.count == 3)
        #expect((5..<8).allSatisfy { outcomes.failure($0) == "outbound HTTP: queue full (5 requests wait)" })
        #expect(PollDriver(client.sources).run(for: .seconds(10)) { outcomes.count == 8 })
        #expect((0..<5).allSatisfy { outcomes.response($0)?.status == 200 })
    }

    @Test("a waiting request no connection takes in time fails at its timeout, saying why")
    func waitingTimeout() throws {
        let server = try PythonServer("raw")
        let client = try Self.client { $0.connections = 1 }
        defer { client.close() }
        let outcomes = Outcomes()
        let now = MonotonicClock.now()
        client.send(
            HTTP1Request(method: "GET", target: "/stall"), to: server.origin, timeout: 2_000_000_000, now: now,
            done: outcomes.record(0))
        client.send(
            HTTP1Request(method: "GET", target: "/interim"), to: server.origin, timeout: 200_000_000, now: now,
            done: outcomes.record(1))
        #expect(PollDriver(client.sources).run(for: .seconds(5)) { outcomes.count == 1 })
        #expect(
            outcomes.failure(1)
                == "not sent to http://127.0.0.1:\(server.port) within 0.2 s: no connection was free (1 to it of at most 8, 1 busy of 1)"
        )
        #expect(MonotonicClock.now() - now < 1_500_000_000)
    }

    @Test("close() fails what is in flight and what waits, each once; send after close fails at once")
    func closeFailsEverything() throws {
        let server = try PythonServer("raw")
        let client = try Self.client { $0.connections = 2 }
        let outcomes = Outcomes()
        for index in 0..<5 {
            client.send(
                HTTP1Request(method: "GET", target: "/stall"), to: server.origin, timeout: 10_000_000_000,
                now: MonotonicClock.now(), done: outcomes.record(index))
        }
        #expect(PollDriver(client.sources).run(for: .seconds(5)) { client.inFlight == 2 })
        client.close()
        #expect(outcomes.count == 5)
        #expect((0..<5).allSatisfy { outcomes.failure($0) == "the outbound HTTP client was closed" })
        #expect(outcomes.order == [0, 1, 2, 3, 4])
        client.send(
            HTTP1Request(method: "GET", target: "/"), to: server.origin, timeout: 1, now: 0, done: outcomes.record(5))
        #expect(outcomes.failure(5) == "the outbound HTTP client is closed")
        #expect(client.sources.allSatisfy { $0.watch == nil && $0.nextDeadline == nil })
    }

    @Test("a done callback may send again or close the client")
    func reentrantCallbacks() throws {
        let server = try PythonServer("http11")
        let client = try Self.client { $0.connections = 1 }
        let outcomes = Outcomes()
        let request = HTTP1Request(method: "GET", target: "/hello")
        var chained = 0
        func chain(_ outcome: HTTP1Outcome) {
            outcomes.record(chained)(outcome)
            chained += 1
            if chained < 5 {
                client.send(request, to: server.origin, timeout: 5_000_000_000, now: MonotonicClock.now(), done: chain)
            } else {
                client.close()
            }
        }
        client.send(request, to: server.origin, timeout: 5_000_000_000, now: MonotonicClock.now(), done: chain)
        #expect(PollDriver(client.sources).run(for: .seconds(10)) { outcomes.count == 5 })
        #expect((0..<5).allSatisfy { outcomes.response($0)?.status == 200 })
        #expect(client.connections(to: server.origin) == 0)
    }
}
