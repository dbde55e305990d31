import Foundation
import HTTP2
import Sockets
import TestSupport
import Testing

@testable import PushHub

/// The HTTP/2 link against real servers on loopback: Debian's nghttpd (nghttp2, TLS with ALPN
/// h2) and a Python `h2` server scripted to send GOAWAY and REFUSED_STREAM.
@Suite(.serialized) struct HTTP2LinkTests {
    struct SetupFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Outcomes by the order requests were sent.
    final class Outcomes {
        var byIndex: [Int: HTTP2LinkOutcome] = [:]
        var count: Int { byIndex.count }

        func record(_ index: Int) -> (HTTP2LinkOutcome) -> Void {
            { outcome in
                precondition(self.byIndex[index] == nil, "done is called once per request")
                self.byIndex[index] = outcome
            }
        }

        func response(_ index: Int) -> HTTP2Response? {
            guard case .response(let response) = byIndex[index] else { return nil }
            return response
        }

        func failure(_ index: Int) -> (String, Bool)? {
            guard case .failed(let reason, let unprocessed) = byIndex[index] else { return nil }
            return (reason, unprocessed)
        }
    }

    /// nghttpd on a free loopback port, serving `htdocs` (hello.txt, big.bin) and echoing POST
    /// bodies, at most 50 concurrent streams per connection.
    final class NGHTTPD {
        let directory: String
        let port: Int
        let certificate: String
        let key: String
        let big: [UInt8]
        private let tls: Bool
        private var process: Process?

        init(tls: Bool = true) throws {
            port = try RedisServer.freePort()
            directory = NSTemporaryDirectory() + "pushhub-nghttpd-\(getpid())-\(port)"
            (certificate, key) = try SelfSignedCertificate.make(in: directory)
            let htdocs = directory + "/htdocs"
            try FileManager.default.createDirectory(atPath: htdocs, withIntermediateDirectories: true)
            try Data("hello\n".utf8).write(to: URL(fileURLWithPath: htdocs + "/hello.txt"))
            var generator = SeededGenerator(state: 30)
            big = (0..<(512 << 10)).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } }
            try Data(big).write(to: URL(fileURLWithPath: htdocs + "/big.bin"))
            self.tls = tls
            try start()
        }

        deinit {
            stop()
            try? FileManager.default.removeItem(atPath: directory)
        }

        func start() throws {
            let server = Process()
            server.executableURL = URL(fileURLWithPath: try RedisServer.executable("nghttpd"))
            server.arguments =
                ["--htdocs=\(directory)/htdocs", "--echo-upload", "--max-concurrent-streams=50", "-a", "127.0.0.1"]
                + (tls ? [String(port), key, certificate] : ["--no-tls", String(port)])
            server.standardOutput = FileHandle.nullDevice
            server.standardError = FileHandle.nullDevice
            try server.run()
            process = server
            try HTTP2LinkTests.waitUntilListening(port)
        }

        /// SIGKILL: what a crash looks like to the client.
        func stop() {
            guard let process, process.isRunning else { return }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            self.process = nil
        }
    }

    static func waitUntilListening(_ port: Int) throws {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if (try? BlockingSocket(
                connectingTo: SocketAddress(host: "127.0.0.1", port: UInt16(port)), timeout: .milliseconds(200)))
                != nil
            {
                return
            }
            usleep(20_000)
        }
        throw SetupFailure(description: "nothing listens on port \(port) after 10 s")
    }

    static func link(
        port: Int, caFile: String?, _ configure: (inout HTTP2Link.Options) -> Void = { _ in }
    ) throws -> HTTP2Link {
        let tls = try caFile.map { file in try TLSClientContext(caFile: file, alpn: ["h2"]) }
        var options = HTTP2Link.Options(host: "127.0.0.1", port: UInt16(port), tls: tls, name: "test")
        options.backoff = Backoff(initial: .milliseconds(20), cap: .milliseconds(200))
        configure(&options)
        return HTTP2Link(options: options, now: MonotonicClock.now())
    }

    static func get(_ path: String, port: Int) -> HTTP2Request {
        HTTP2Request(method: "GET", authority: "127.0.0.1:\(port)", path: path)
    }

    @Test("TLS with ALPN h2: a GET is answered; the link connects on demand and stays connected")
    func tlsGet() throws {
        let server = try NGHTTPD()
        let link = try Self.link(port: server.port, caFile: server.certificate)
        defer { link.close() }
        #expect(!link.isConnected && link.watch == nil)
        let outcomes = Outcomes()
        link.send(Self.get("/hello.txt", port: server.port), now: MonotonicClock.now(), done: outcomes.record(0))
        #expect(link.waiting == 1)
        let driver = PollDriver([link])
        #expect(driver.run(for: .seconds(10)) { outcomes.count == 1 })
        #expect(outcomes.response(0)?.status == 200)
        #expect(outcomes.response(0)?.body == Array("hello\n".utf8))
        #expect(link.isConnected && link.waiting == 0 && link.connectionsOpened == 1)
    }

    @Test("500 requests at once go over one connection, never more than the server's 50 streams at a time")
    func concurrency() throws {
        let server = try NGHTTPD()
        let link = try Self.link(port: server.port, caFile: server.certificate) { $0.maxStartsPerTick = 64 }
        defer { link.close() }
        let outcomes = Outcomes()
        for index in 0..<500 {
            link.send(
                Self.get("/hello.txt", port: server.port), now: MonotonicClock.now(), done: outcomes.record(index))
        }
        var most = 0
        let driver = PollDriver([link])
        #expect(
            driver.run(for: .seconds(20)) {
                most = max(most, link.inFlight)
                return outcomes.count == 500
            })
        #expect((0..<500).allSatisfy { outcomes.response($0)?.body == Array("hello\n".utf8) })
        #expect(most == 50)
        #expect(link.connectionsOpened == 1)
    }

    @Test("a 4 MiB response arrives whole (receive flow control: WINDOW_UPDATEs as it comes)")
    func largeResponse() throws {
        let server = try NGHTTPD()
        let link = try Self.link(port: server.port, caFile: server.certificate) {
            $0.connection.maxResponseBody = 8 << 20
            $0.connection.initialWindowSize = 256 << 10
            $0.connection.connectionWindowSize = 1 << 20
        }
        defer { link.close() }
        let outcomes = Outcomes()
        link.send(Self.get("/big.bin", port: server.port), now: MonotonicClock.now(), done: outcomes.record(0))
        #expect(PollDriver([link]).run(for: .seconds(20)) { outcomes.count == 1 })
        #expect(outcomes.response(0)?.body == server.big)
    }

    @Test("a response past maxResponseBody fails that request only")
    func responseTooLarge() throws {
        let server = try NGHTTPD()
        let link = try Self.link(port: server.port, caFile: server.certificate)
        defer { link.close() }
        let outcomes = Outcomes()
        link.send(Self.get("/big.bin", port: server.port), now: MonotonicClock.now(), done: outcomes.record(0))
        link.send(Self.get("/hello.txt", port: server.port), now: MonotonicClock.now(), done: outcomes.record(1))
        #expect(PollDriver([link]).run(for: .seconds(20)) { outcomes.count == 2 })
        #expect(outcomes.failure(0)?.0.contains("maxResponseBody") == true)
        #expect(outcomes.failure(0)?.1 == false)
        #expect(outcomes.response(1)?.status == 200)
    }

    @Test("a 1 MiB request body goes out within the server's windows (send flow control) and is echoed")
    func largeRequest() throws {
        let server = try NGHTTPD()
        let link = try Self.link(port: server.port, caFile: server.certificate) {
            $0.connection.maxResponseBody = 2 << 20
        }
        defer { link.close() }
        let body = Array(server.big.prefix(1 << 20))
        let outcomes = Outcomes()
        var request = Self.get("/echo", port: server.port)
        request.method = "POST"
        request.body = body
        link.send(request, now: MonotonicClock.now(), done: outcomes.record(0))
        #expect(PollDriver([link]).run(for: .seconds(20)) { outcomes.count == 1 })
        #expect(outcomes.response(0)?.status == 200)
        #expect(outcomes.response(0)?.body == body)
    }

    @Test("a server killed mid-stream: written requests fail (maybe processed); the link reconnects when it is back")
    func serverKilled() throws {
        let server = try NGHTTPD()
        let link = try Self.link(port: server.port, caFile: server.certificate) {
            $0.connection.maxResponseBody = 8 << 20
            $0.connection.initialWindowSize = 64 << 10
            $0.connection.connectionWindowSize = 64 << 10
        }
        defer { link.close() }
        let outcomes = Outcomes()
        for index in 0..<10 {
            link.send(Self.get("/big.bin", port: server.port), now: MonotonicClock.now(), done: outcomes.record(index))
        }
        let driver = PollDriver([link])
        #expect(driver.run(for: .seconds(10)) { link.isConnected && link.inFlight == 10 })
        server.stop()
        #expect(driver.run(for: .seconds(10)) { outcomes.count == 10 })
        for index in 0..<10 {
            let failure = outcomes.failure(index)
            #expect(failure?.1 == false, "\(index): \(String(describing: failure))")
        }
        #expect(!link.isConnected)
        // Down: a new request waits (it is retried with backoff), then goes out once the server is back.
        link.send(Self.get("/hello.txt", port: server.port), now: MonotonicClock.now(), done: outcomes.record(10))
        #expect(!driver.run(for: .milliseconds(300)) { outcomes.count == 11 })
        #expect(link.lastError.contains("cannot connect") || link.lastError.contains("closed"))
        try server.start()
        #expect(driver.run(for: .seconds(10)) { outcomes.count == 11 })
        #expect(outcomes.response(10)?.body == Array("hello\n".utf8))
        #expect(link.connectionsOpened == 2)
    }

    @Test("at most maxStartsPerTick streams start per tick")
    func startsPerTick() throws {
        let server = try NGHTTPD()
        let link = try Self.link(port: server.port, caFile: server.certificate) { $0.maxStartsPerTick = 5 }
        defer { link.close() }
        let outcomes = Outcomes()
        link.send(Self.get("/hello.txt", port: server.port), now: MonotonicClock.now(), done: outcomes.record(0))
        let driver = PollDriver([link])
        #expect(driver.run(for: .seconds(10)) { outcomes.count == 1 })
        for index in 1...20 {
            link.send(
                Self.get("/hello.txt", port: server.port), now: MonotonicClock.now(), done: outcomes.record(index))
        }
        #expect(link.waiting == 20 && link.inFlight == 0)
        link.tick(now: MonotonicClock.now())
        #expect(link.inFlight == 5)
        link.tick(now: MonotonicClock.now())
        #expect(link.inFlight == 10)
        #expect(link.nextDeadline == 0)
        #expect(driver.run(for: .seconds(10)) { outcomes.count == 21 })
    }

    @Test(
        "answered PINGs keep an idle connection; after idleTimeout without requests it closes, and the next request opens another"
    )
    func keepaliveAndIdleClose() throws {
        let server = try NGHTTPD()
        let link = try Self.link(port: server.port, caFile: server.certificate) {
            $0.pingInterval = 30_000_000
            $0.requestTimeout = 1_000_000_000
            $0.idleTimeout = 600_000_000
        }
        defer { link.close() }
        let outcomes = Outcomes()
        link.send(Self.get("/hello.txt", port: server.port), now: MonotonicClock.now(), done: outcomes.record(0))
        let driver = PollDriver([link])
        #expect(driver.run(for: .seconds(10)) { outcomes.count == 1 })
        // Ten PING intervals: each answered, the connection stays.
        #expect(!driver.run(for: .milliseconds(300)) { !link.isConnected })
        #expect(driver.run(for: .seconds(2)) { !link.isConnected })
        #expect(link.state == .idle && link.watch == nil && link.nextDeadline == nil)
        link.send(Self.get("/hello.txt", port: server.port), now: MonotonicClock.now(), done: outcomes.record(1))
        #expect(driver.run(for: .seconds(10)) { outcomes.count == 2 })
        #expect(outcomes.response(1)?.status == 200 && link.connectionsOpened == 2)
    }

    @Test("a request with no connection in time fails as unprocessed, saying why")
    func noServer() throws {
        let port = try RedisServer.freePort()
        let link = try Self.link(port: port, caFile: nil) { $0.requestTimeout = 300_000_000 }
        defer { link.close() }
        let outcomes = Outcomes()
        link.send(Self.get("/", port: port), now: MonotonicClock.now(), done: outcomes.record(0))
        #expect(PollDriver([link]).run(for: .seconds(5)) { outcomes.count == 1 })
        let failure = try #require(outcomes.failure(0))
        #expect(failure.1)
        #expect(failure.0.contains("not sent to 127.0.0.1:\(port) within 0.3 s"), "\(failure.0)")
        #expect(failure.0.contains("Connection refused") || failure.0.contains("ECONNREFUSED"), "\(failure.0)")
    }

    @Test("a host name is looked up off the loop: the link waits in .resolving, then connects (or says why not)")
    func lookupOffTheLoop() throws {
        let server = try NGHTTPD()
        var options = HTTP2Link.Options(host: "localhost", port: UInt16(server.port), tls: nil, name: "test")
        options.requestTimeout = 2_000_000_000
        let link = HTTP2Link(options: options, now: MonotonicClock.now())
        defer { link.close() }
        let outcomes = Outcomes()
        link.send(Self.get("/hello.txt", port: server.port), now: MonotonicClock.now(), done: outcomes.record(0))
        link.tick(now: MonotonicClock.now())
        guard case .resolving = link.state else {
            Issue.record("a name is not looked up on the loop's thread; the link is \(link.state)")
            return
        }
        // nghttpd serves TLS here: the h2c preface fails, but only after the name was resolved.
        #expect(PollDriver([link]).run(for: .seconds(5)) { outcomes.count == 1 })
        #expect(
            outcomes.failure(0).map { !$0.0.contains("resolve") } == true, "\(String(describing: outcomes.failure(0)))")

        var unknown = HTTP2Link.Options(host: "no-such-host.invalid", port: 443, tls: nil, name: "test")
        unknown.requestTimeout = 2_000_000_000
        let nowhere = HTTP2Link(options: unknown, now: MonotonicClock.now())
        defer { nowhere.close() }
        nowhere.send(Self.get("/", port: 443), now: MonotonicClock.now(), done: outcomes.record(1))
        #expect(PollDriver([nowhere]).run(for: .seconds(5)) { outcomes.count == 2 })
        #expect(
            outcomes.failure(1)?.0.contains("no-such-host.invalid") == true,
            "\(String(describing: outcomes.failure(1)))")
    }

    @Test("a TLS server that does not agree to h2 by ALPN: every waiting request fails with a clear error")
    func noALPN() throws {
        let port = try RedisServer.freePort()
        let directory = NSTemporaryDirectory() + "pushhub-noalpn-\(getpid())-\(port)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (certificate, key) = try SelfSignedCertificate.make(in: directory)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        server.arguments = ["s_server", "-accept", String(port), "-cert", certificate, "-key", key, "-quiet"]
        server.standardInput = Pipe()
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            if server.isRunning { server.terminate() }
        }
        try Self.waitUntilListening(port)
        let link = try Self.link(port: port, caFile: certificate)
        defer { link.close() }
        let outcomes = Outcomes()
        link.send(Self.get("/", port: port), now: MonotonicClock.now(), done: outcomes.record(0))
        link.send(Self.get("/", port: port), now: MonotonicClock.now(), done: outcomes.record(1))
        #expect(PollDriver([link]).run(for: .seconds(10)) { outcomes.count == 2 })
        let expected = "the server at 127.0.0.1:\(port) did not agree to HTTP/2 (ALPN)"
        #expect(outcomes.failure(0)?.0 == expected && outcomes.failure(0)?.1 == true)
        #expect(outcomes.failure(1)?.0 == expected)
        #expect(link.lastError == expected)
    }

    @Test("a certificate the CA file does not vouch for fails the waiting requests, naming the problem")
    func untrustedCertificate() throws {
        let server = try NGHTTPD()
        let other = try SelfSignedCertificate.make(in: server.directory + "/other")
        let link = try Self.link(port: server.port, caFile: other.certificate)
        defer { link.close() }
        let outcomes = Outcomes()
        link.send(Self.get("/hello.txt", port: server.port), now: MonotonicClock.now(), done: outcomes.record(0))
        #expect(PollDriver([link]).run(for: .seconds(10)) { outcomes.count == 1 })
        #expect(outcomes.failure(0)?.0.contains("is not trusted") == true, "\(String(describing: outcomes.failure(0)))")
    }

    @Test("close fails what waits and never reconnects; send after close fails at once")
    func closeFailsWaiting() throws {
        let server = try NGHTTPD()
        let link = try Self.link(port: server.port, caFile: server.certificate)
        let outcomes = Outcomes()
        link.send(Self.get("/hello.txt", port: server.port), now: MonotonicClock.now(), done: outcomes.record(0))
        link.close()
        #expect(outcomes.failure(0)?.1 == true)
        link.send(Self.get("/hello.txt", port: server.port), now: MonotonicClock.now(), done: outcomes.record(1))
        #expect(outcomes.failure(1)?.0 == "the test link is closed")
        #expect(link.watch == nil && link.nextDeadline == nil)
    }

    @Test("a PING not answered within requestTimeout drops the connection")
    func pingTimeout() throws {
        let peer = try ScriptedPeer(mode: "mute-after-settings")
        let link = try Self.link(port: peer.port, caFile: nil) {
            $0.pingInterval = 50_000_000
            $0.requestTimeout = 200_000_000
        }
        defer { link.close() }
        let outcomes = Outcomes()
        link.send(Self.get("/hang", port: peer.port), now: MonotonicClock.now(), done: outcomes.record(0))
        let driver = PollDriver([link])
        #expect(driver.run(for: .seconds(5)) { link.lastError.contains("did not answer a PING") })
        #expect(!link.isConnected)
    }

    // MARK: - A scripted Python h2 server

    /// A Python `h2` server (cleartext, prior knowledge) on a free port. Its modes:
    /// - `refuse`: resets the first request it ever gets with REFUSED_STREAM, answers the rest;
    /// - `goaway`: on its first connection waits for 3 requests, answers the first, then sends
    ///   GOAWAY with that stream as the last; later connections answer everything;
    /// - `answer-after-goaway`: the same, GOAWAY first and then the answer;
    /// - `mute-after-settings`: sends SETTINGS, then ignores everything (PINGs too);
    /// - `deaf`: sends SETTINGS allowing 10,000 streams, then never reads;
    /// - `goaway-calm`, `goaway-noerror`: answers the first request of every connection with
    ///   GOAWAY (ENHANCE_YOUR_CALM or NO_ERROR), last stream 0;
    /// - `refuse-all`: resets every request whose path starts with /refuse with REFUSED_STREAM,
    ///   answers GET /count with how many it refused, answers the rest.
    /// Answers are 200 with the body "<connection number> <path>".
    final class ScriptedPeer {
        let port: Int
        private let process: Process

        static let script = #"""
            import socket, sys, threading
            import h2.config, h2.connection, h2.errors, h2.events, h2.exceptions, h2.settings

            mode = sys.argv[1]
            listener = socket.socket()
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", 0))
            listener.listen(16)
            print(listener.getsockname()[1], flush=True)
            state = {"connections": 0, "refused": False, "refusals": 0}
            lock = threading.Lock()

            def respond(conn, number, stream, path):
                body = f"{number} {path}".encode()
                conn.send_headers(stream, [(":status", "200"), ("content-length", str(len(body)))])
                conn.send_data(stream, body, end_stream=True)

            def serve(sock, number):
                conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False))
                conn.initiate_connection()
                if mode == "deaf":
                    conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 10000})
                    sock.sendall(conn.data_to_send())
                    threading.Event().wait()
                sock.sendall(conn.data_to_send())
                paths, ended, gone = {}, [], False
                while True:
                    data = sock.recv(65536)
                    if not data:
                        return
                    if mode == "mute-after-settings":
                        continue
                    try:
                        events = conn.receive_data(data)
                    except h2.exceptions.ProtocolError:
                        events = []
                    for event in events:
                        if isinstance(event, h2.events.RequestReceived):
                            paths[event.stream_id] = dict(event.headers)[b":path"].decode()
                        if isinstance(event, h2.events.StreamEnded):
                            ended.append(event.stream_id)
                    if gone:
                        continue
                    if mode == "refuse":
                        for stream in ended:
                            with lock:
                                refuse = not state["refused"]
                                state["refused"] = True
                            if refuse:
                                conn.reset_stream(stream, error_code=h2.errors.ErrorCodes.REFUSED_STREAM)
                            else:
                                respond(conn, number, stream, paths[stream])
                        ended = []
                    elif mode.startswith("goaway-"):
                        if ended:
                            calm = h2.errors.ErrorCodes.ENHANCE_YOUR_CALM
                            code = calm if mode == "goaway-calm" else h2.errors.ErrorCodes.NO_ERROR
                            conn.close_connection(error_code=code, last_stream_id=0)
                            gone = True
                    elif mode == "refuse-all":
                        for stream in ended:
                            if paths[stream].startswith("/refuse"):
                                with lock:
                                    state["refusals"] += 1
                                conn.reset_stream(stream, error_code=h2.errors.ErrorCodes.REFUSED_STREAM)
                            elif paths[stream] == "/count":
                                with lock:
                                    body = str(state["refusals"]).encode()
                                conn.send_headers(stream, [(":status", "200"), ("content-length", str(len(body)))])
                                conn.send_data(stream, body, end_stream=True)
                            else:
                                respond(conn, number, stream, paths[stream])
                        ended = []
                    elif mode == "answer-after-goaway" and number == 1:
                        if len(ended) == 3:
                            # GOAWAY by hand: h2 sends nothing after its own close_connection.
                            goaway = bytes([0, 0, 8, 7, 0, 0, 0, 0, 0]) + ended[0].to_bytes(4, "big") + bytes(4)
                            respond(conn, number, ended[0], paths[ended[0]])
                            sock.sendall(goaway + conn.data_to_send())
                            gone = True
                    elif mode == "goaway" and number == 1:
                        if len(ended) == 3:
                            respond(conn, number, ended[0], paths[ended[0]])
                            conn.close_connection(error_code=0, last_stream_id=ended[0], additional_data=b"maintenance")
                            gone = True
                    else:
                        for stream in ended:
                            respond(conn, number, stream, paths[stream])
                        ended = []
                    sock.sendall(conn.data_to_send())

            while True:
                sock, _ = listener.accept()
                with lock:
                    state["connections"] += 1
                    number = state["connections"]
                threading.Thread(target=serve, args=(sock, number), daemon=True).start()
            """#

        init(mode: String) throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            let python = root.appendingPathComponent(".venv/bin/python").path
            process = Process()
            process.executableURL = URL(fileURLWithPath: python)
            process.arguments = ["-c", Self.script, mode]
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
                throw SetupFailure(description: "the h2 peer did not start (is h2 in .venv? make venv)")
            }
            self.port = port
        }

        deinit {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
    }

    @Test("REFUSED_STREAM: the link sends the request again itself, and it is answered")
    func refusedStream() throws {
        let peer = try ScriptedPeer(mode: "refuse")
        let link = try Self.link(port: peer.port, caFile: nil)
        defer { link.close() }
        let outcomes = Outcomes()
        link.send(Self.get("/a", port: peer.port), now: MonotonicClock.now(), done: outcomes.record(0))
        #expect(PollDriver([link]).run(for: .seconds(10)) { outcomes.count == 1 })
        #expect(outcomes.response(0)?.body == Array("1 /a".utf8))
    }

    @Test("GOAWAY: requests above its last stream go again on a new connection; the one below is answered on the old")
    func goAway() throws {
        let peer = try ScriptedPeer(mode: "goaway")
        let link = try Self.link(port: peer.port, caFile: nil)
        defer { link.close() }
        let outcomes = Outcomes()
        for (index, path) in ["/a", "/b", "/c"].enumerated() {
            link.send(Self.get(path, port: peer.port), now: MonotonicClock.now(), done: outcomes.record(index))
        }
        #expect(PollDriver([link]).run(for: .seconds(10)) { outcomes.count == 3 })
        #expect(outcomes.response(0)?.body == Array("1 /a".utf8))
        #expect(outcomes.response(1)?.body == Array("2 /b".utf8))
        #expect(outcomes.response(2)?.body == Array("2 /c".utf8))
        #expect(link.lastError.contains("GOAWAY (NO_ERROR, last stream 1): maintenance"), "\(link.lastError)")
        #expect(link.connectionsOpened == 2)
    }
    @Test(
        "GOAWAY on every connection before any response: reconnects follow the growing backoff",
        arguments: ["goaway-calm", "goaway-noerror"])
    func goAwayBackoff(_ mode: String) throws {
        let peer = try ScriptedPeer(mode: mode)
        let link = try Self.link(port: peer.port, caFile: nil) {
            $0.backoff = Backoff(initial: .milliseconds(100), cap: .seconds(10))
        }
        link.random = { 0.5 }
        defer { link.close() }
        let outcomes = Outcomes()
        link.send(Self.get("/a", port: peer.port), now: MonotonicClock.now(), done: outcomes.record(0))
        let driver = PollDriver([link])
        #expect(driver.run(for: .seconds(5)) { link.lastError.contains("GOAWAY") })
        let start = MonotonicClock.now()
        #expect(!driver.run(for: .seconds(1)) { outcomes.count > 0 })
        // Delays of 50, 100, 200, 400, 800 ms: four or five connections in the second, not dozens.
        #expect(link.connectionsOpened >= 3 && link.connectionsOpened <= 6, "\(link.connectionsOpened) connections")
        #expect(MonotonicClock.now() - start >= 1_000_000_000)
        #expect(link.waiting == 1)
    }

    @Test("REFUSED_STREAM: resent at once, then after a growing backoff, then failed as unprocessed; others go on")
    func refusedBackoff() throws {
        let peer = try ScriptedPeer(mode: "refuse-all")
        let link = try Self.link(port: peer.port, caFile: nil) {
            $0.backoff = Backoff(initial: .milliseconds(40), cap: .milliseconds(80))
        }
        link.random = { 0.5 }
        defer { link.close() }
        let outcomes = Outcomes()
        let start = MonotonicClock.now()
        link.send(Self.get("/refuse", port: peer.port), now: start, done: outcomes.record(0))
        let driver = PollDriver([link])
        #expect(driver.run(for: .seconds(1)) { link.isConnected })
        link.send(Self.get("/ok", port: peer.port), now: MonotonicClock.now(), done: outcomes.record(1))
        #expect(driver.run(for: .seconds(1)) { outcomes.response(1) != nil })
        #expect(outcomes.count == 1, "the refused request waits; the other is answered meanwhile")
        #expect(driver.run(for: .seconds(5)) { outcomes.count == 2 })
        // Resends after 0, then 3/4 of 40, 80, 80, 80, 80 ms: 270 ms at least.
        #expect(MonotonicClock.now() - start >= 270_000_000)
        let failure = try #require(outcomes.failure(0))
        #expect(failure.1, "unprocessed: the caller may send it again")
        #expect(failure.0.contains("REFUSED_STREAM") && failure.0.contains("7 times"), "\(failure.0)")
        link.send(Self.get("/count", port: peer.port), now: MonotonicClock.now(), done: outcomes.record(2))
        #expect(driver.run(for: .seconds(5)) { outcomes.count == 3 })
        #expect(outcomes.response(2)?.body == Array("\(HTTP2Link.maxRefusedResends + 1)".utf8))
        #expect(link.connectionsOpened == 1)
    }

    @Test("with more than maxOutputBytes unwritten, queued requests and free streams do not make the loop spin")
    func noSpinWhileOutputFull() throws {
        let peer = try ScriptedPeer(mode: "deaf")
        let link = try Self.link(port: peer.port, caFile: nil) {
            $0.maxOutputBytes = 64 << 10
            $0.maxStartsPerTick = 10_000
            $0.connection.maxConcurrentStreams = 10_000
        }
        defer { link.close() }
        let outcomes = Outcomes()
        // 8 KiB that HPACK sends as they are: too large for its table, and '~' has a 13-bit Huffman code.
        let pad = String(repeating: "~", count: 8192)
        for index in 0..<3000 {
            var request = Self.get("/\(index)", port: peer.port)
            request.headers = [HeaderField("x-pad", pad)]
            link.send(request, now: MonotonicClock.now(), done: outcomes.record(index))
        }
        let driver = PollDriver([link])
        #expect(driver.run(for: .seconds(10)) { link.isConnected && link.inFlight > 0 })
        // The server reads nothing: the socket's buffers fill, then nothing more starts.
        let deadline = MonotonicClock.now() + 20_000_000_000
        var started = -1
        while link.inFlight != started, MonotonicClock.now() < deadline {
            started = link.inFlight
            _ = driver.run(for: .milliseconds(300)) { false }
        }
        #expect(link.inFlight == started, "stuck")
        // Streams are free (10,000) and requests wait, but the output is full.
        #expect(link.unwrittenOutput >= 64 << 10 && link.waiting > link.inFlight, "\(link.inFlight) started")
        #expect(link.nextDeadline != 0, "nothing can start: the loop must sleep until the output drains")
    }

    @Test("close() while requests are in flight, queued and waiting to be resent: each fails once; no reconnect")
    func closeFailsEverythingOnce() throws {
        let peer = try ScriptedPeer(mode: "refuse-all")
        let link = try Self.link(port: peer.port, caFile: nil) {
            $0.backoff = Backoff(initial: .seconds(5), cap: .seconds(5))
            $0.maxStartsPerTick = 1
        }
        let outcomes = Outcomes()
        link.send(Self.get("/refuse", port: peer.port), now: MonotonicClock.now(), done: outcomes.record(0))
        let driver = PollDriver([link])
        // Refused twice: now it waits seconds for its next resend.
        #expect(
            driver.run(for: .seconds(5)) {
                link.isConnected && link.inFlight == 0 && link.nextDeadline ?? 0 > MonotonicClock.now() + 1_000_000_000
            })
        link.send(Self.get("/a", port: peer.port), now: MonotonicClock.now(), done: outcomes.record(1))
        link.tick(now: MonotonicClock.now())
        link.send(Self.get("/b", port: peer.port), now: MonotonicClock.now(), done: outcomes.record(2))
        #expect(link.waiting == 3 && link.inFlight == 1)
        link.close()
        #expect(outcomes.count == 3)
        #expect(outcomes.failure(0)?.1 == true && outcomes.failure(1)?.1 == false && outcomes.failure(2)?.1 == true)
        #expect(link.state == .closed && link.watch == nil && link.nextDeadline == nil && link.waiting == 0)
        for _ in 0..<10 { link.tick(now: MonotonicClock.now() + 60_000_000_000) }
        #expect(link.state == .closed && link.connectionsOpened == 1)
    }
    @Test("close() from a done callback while GOAWAY's unprocessed requests wait to go again: each fails once")
    func closeFromCallback() throws {
        let peer = try ScriptedPeer(mode: "answer-after-goaway")
        let link = try Self.link(port: peer.port, caFile: nil)
        let outcomes = Outcomes()
        let first = outcomes.record(0)
        link.send(Self.get("/a", port: peer.port), now: MonotonicClock.now()) { outcome in
            first(outcome)
            link.close()  // as PushChannel does when the provider refuses its credentials
        }
        for (index, path) in ["/b", "/c"].enumerated() {
            link.send(Self.get(path, port: peer.port), now: MonotonicClock.now(), done: outcomes.record(index + 1))
        }
        #expect(PollDriver([link]).run(for: .seconds(5)) { outcomes.count == 3 })
        #expect(outcomes.response(0)?.body == Array("1 /a".utf8))
        #expect(outcomes.failure(1)?.1 == true && outcomes.failure(2)?.1 == true)
        #expect(link.state == .closed && link.waiting == 0)
    }
}
