import Foundation
import TestSupport
import Testing

@testable import PushHub

/// The Redis link against a real redis-server on loopback (DESIGN §11).
@Suite(.serialized) struct RedisConnectionTests {
    final class Replies {
        var results: [Result<RESPValue, RedisError>] = []
    }

    private static func link(_ url: String, _ configure: (inout RedisConnection.Options) -> Void = { _ in }) throws
        -> RedisConnection
    {
        var options = RedisConnection.Options(url: try RedisURL(url))
        configure(&options)
        return RedisConnection(options: options, now: MonotonicClock.now())
    }

    /// A redis-server, a link to it that is signed in and ready, and the driver that runs it.
    final class Connected {
        let server: RedisServer
        let link: RedisConnection
        let driver: PollDriver

        init(_ configure: (inout RedisConnection.Options) -> Void = { _ in }) throws {
            server = try RedisServer()
            link = try RedisConnectionTests.link("redis://127.0.0.1:\(server.port)", configure)
            driver = PollDriver([link])
            #expect(driver.run { link.isReady })
        }

        deinit { link.close() }
    }

    private static func send(_ link: RedisConnection, _ name: String, _ arguments: [String], into replies: Replies) {
        link.send(RedisCommand(name, arguments), now: MonotonicClock.now()) { replies.results.append($0) }
    }

    @Test("pipelines 10,000 commands and matches each reply to its command, in order")
    func pipeline() throws {
        let connected = try Connected()
        let (link, driver) = (connected.link, connected.driver)
        let replies = Replies()
        for _ in 0..<10_000 { Self.send(link, "INCR", ["counter"], into: replies) }
        #expect(driver.run { replies.results.count == 10_000 })
        let values = replies.results.compactMap { try? $0.get().integer }
        #expect(values == Array(1...10_000))
    }

    @Test("values are binary-safe, up to a megabyte with CR LF and zero bytes in them")
    func binarySafe() throws {
        let connected = try Connected()
        let (link, driver) = (connected.link, connected.driver)
        var value = [UInt8](repeating: 0, count: 1 << 20)
        for index in value.indices { value[index] = UInt8(truncatingIfNeeded: index * 7) }
        value[100...103] = [13, 10, 0, 13]
        let replies = Replies()
        link.send(RedisCommand("SET", bytes: [Array("blob".utf8), value]), now: MonotonicClock.now()) {
            replies.results.append($0)
        }
        Self.send(link, "GET", ["blob"], into: replies)
        #expect(driver.run { replies.results.count == 2 })
        #expect(try replies.results[0].get() == .simpleString("OK"))
        #expect(try replies.results[1].get() == .bulkString(value))
    }

    @Test("an error reply names the command and says what Redis said")
    func errorNamesCommand() throws {
        let connected = try Connected()
        let (link, driver) = (connected.link, connected.driver)
        let replies = Replies()
        Self.send(link, "SET", ["text", "v"], into: replies)
        Self.send(link, "HGET", ["text", "field"], into: replies)
        Self.send(link, "GET", ["text"], into: replies)
        #expect(driver.run { replies.results.count == 3 })
        guard case .failure(let error) = replies.results[1], case .server(let command, let message) = error else {
            Issue.record("expected an error reply, got \(replies.results[1])")
            return
        }
        #expect(command == "HGET" && message.hasPrefix("WRONGTYPE"))
        #expect(error.description.hasPrefix("Redis answered HGET with an error: WRONGTYPE"))
        #expect(!error.outcomeUnknown)
        // The link stays in step: the next reply is the next command's.
        #expect(try replies.results[2].get().string == "v")
    }

    @Test("signs in as an ACL user, selects the database and names itself")
    func signsIn() throws {
        let server = try RedisServer()
        try server.cli(["ACL", "SETUSER", "hub", "on", ">s3cret:@", "~*", "&*", "+@all"])
        let link = try Self.link("redis://hub:s3cret%3A%40@127.0.0.1:\(server.port)/3") {
            $0.clientName = "pushhub-test"
        }
        defer { link.close() }
        let driver = PollDriver([link])
        #expect(driver.run { link.isReady })
        let replies = Replies()
        Self.send(link, "SET", ["where", "db3"], into: replies)
        #expect(driver.run { replies.results.count == 1 })
        #expect(try server.cli(["-n", "3", "GET", "where"]) == "db3")
        #expect(try server.cli(["-n", "0", "EXISTS", "where"]) == "0")
        #expect(try server.cli(["CLIENT", "LIST"]).contains("name=pushhub-test"))
        #expect(try server.cli(["CLIENT", "LIST"]).contains("user=hub"))
    }

    @Test("a wrong password keeps the link down, saying why; commands fail at once")
    func wrongPassword() throws {
        let server = try RedisServer(arguments: ["--requirepass", "right"])
        let link = try Self.link("redis://:wrong@127.0.0.1:\(server.port)")
        defer { link.close() }
        let driver = PollDriver([link])
        #expect(driver.run(for: .seconds(1)) { link.lastError.contains("WRONGPASS") })
        #expect(link.lastError.contains("AUTH"))
        #expect(!link.isReady)
        let replies = Replies()
        Self.send(link, "PING", [], into: replies)
        guard case .failure(.notConnected(let command, let reason)) = replies.results.first else {
            Issue.record("expected notConnected, got \(replies.results)")
            return
        }
        #expect(command == "PING" && reason.contains("WRONGPASS"))
    }

    @Test("a command without a reply in time fails, the link is made again, later commands work")
    func timeout() throws {
        let server = try RedisServer()
        let link = try Self.link("redis://127.0.0.1:\(server.port)") { $0.commandTimeout = 200_000_000 }
        defer { link.close() }
        var downs: [String] = []
        var readies = 0
        link.onDown = { downs.append($0) }
        link.onReady = { readies += 1 }
        let driver = PollDriver([link])
        #expect(driver.run { link.isReady })
        let replies = Replies()
        Self.send(link, "DEBUG", ["SLEEP", "0.5"], into: replies)
        Self.send(link, "PING", [], into: replies)
        #expect(driver.run { replies.results.count == 2 })
        #expect(replies.results[0] == .failure(.timedOut(command: "DEBUG", milliseconds: 200)))
        guard case .failure(let lost) = replies.results[1], case .connectionLost(let command, _) = lost else {
            Issue.record("the command behind it should be lost, got \(replies.results[1])")
            return
        }
        #expect(command == "PING" && lost.outcomeUnknown)
        #expect(downs.count == 1 && downs[0].contains("did not answer DEBUG within 200 ms"))
        // The server sleeps on for a while: PING until it answers (each try may time out too).
        var answered = false
        #expect(
            driver.run {
                if link.isReady && link.awaitingReplies == 0 {
                    link.send(RedisCommand("PING", []), now: MonotonicClock.now()) {
                        if case .success(.simpleString("PONG")) = $0 { answered = true }
                    }
                }
                return answered
            })
    }

    @Test("follows a restart of redis-server: down, commands refused at once, up again with backoff")
    func restart() throws {
        let server = try RedisServer()
        let link = try Self.link("redis://127.0.0.1:\(server.port)") {
            $0.backoff = Backoff(initial: .milliseconds(50), cap: .milliseconds(400))
        }
        defer { link.close() }
        var readies = 0
        var downs = 0
        link.onReady = { readies += 1 }
        link.onDown = { _ in downs += 1 }
        let driver = PollDriver([link])
        #expect(driver.run { readies == 1 })
        server.stop()
        #expect(driver.run { downs == 1 })
        let replies = Replies()
        Self.send(link, "PING", [], into: replies)
        guard case .failure(.notConnected) = replies.results.first else {
            Issue.record("a command on a down link fails at once, got \(replies.results)")
            return
        }
        // Attempts keep failing while the server is away; the waits between them stay in the cap.
        driver.run(for: .seconds(1)) { false }
        if case .disconnected(let retryAt) = link.state {
            #expect(retryAt <= MonotonicClock.now() + 400_000_000)
        } else {
            Issue.record("the link should be waiting to retry, is \(link.state)")
        }
        try server.start()
        #expect(driver.run { readies == 2 })
        Self.send(link, "PING", [], into: replies)
        #expect(driver.run { replies.results.count == 2 })
        #expect(try replies.results[1].get() == .simpleString("PONG"))
    }

    @Test("a reply past the limit is refused and the link is made again")
    func replyTooLarge() throws {
        let connected = try Connected { $0.limits.maxReplyBytes = 1000 }
        let (server, link, driver) = (connected.server, connected.link, connected.driver)
        try server.cli(["SET", "big", String(repeating: "x", count: 5000)])
        let replies = Replies()
        Self.send(link, "GET", ["big"], into: replies)
        #expect(driver.run { replies.results.count == 1 })
        guard case .failure(.badReply(let command, let reason)) = replies.results[0] else {
            Issue.record("expected badReply, got \(replies.results)")
            return
        }
        #expect(command == "GET" && reason.contains("larger than 1000 bytes"))
        #expect(driver.run { link.isReady })
    }

    @Test("a subscriber link gets published messages in order, and subscribes again after a reconnect")
    func subscriber() throws {
        let server = try RedisServer()
        let publisher = try Self.link("redis://127.0.0.1:\(server.port)")
        let subscriber = try Self.link("redis://127.0.0.1:\(server.port)") {
            $0.backoff = Backoff(initial: .milliseconds(20), cap: .milliseconds(50))
        }
        defer {
            publisher.close()
            subscriber.close()
        }
        var messages: [String] = []
        var subscribed = 0
        subscriber.pushHandler = { value in
            if let payload = value.elements?.last?.string { messages.append(payload) }
        }
        subscriber.onReady = {
            subscriber.send(RedisCommand("SUBSCRIBE", ["events"]), now: MonotonicClock.now()) { _ in subscribed += 1 }
        }
        let driver = PollDriver([publisher, subscriber])
        #expect(driver.run { publisher.isReady && subscribed == 1 })
        let replies = Replies()
        for index in 0..<100 { Self.send(publisher, "PUBLISH", ["events", "m\(index)"], into: replies) }
        #expect(driver.run { messages.count == 100 })
        #expect(messages == (0..<100).map { "m\($0)" })
        try server.cli(["CLIENT", "KILL", "TYPE", "pubsub"])
        #expect(driver.run { subscribed == 2 })
        Self.send(publisher, "PUBLISH", ["events", "after"], into: replies)
        #expect(driver.run { messages.last == "after" })
    }

    @Test("with no server listening, commands fail at once and the reason names the address")
    func noServer() throws {
        let port = try RedisServer.freePort()
        let link = try Self.link("redis://127.0.0.1:\(port)")
        defer { link.close() }
        let driver = PollDriver([link])
        #expect(driver.run(for: .seconds(1)) { !link.lastError.isEmpty })
        #expect(link.lastError.contains("127.0.0.1:\(port)") && link.lastError.contains("refused"))
    }
}

extension RedisConnectionTests {
    @Test("rediss: speaks TLS to redis-server, its certificate checked; an untrusted one is refused, saying why")
    func tls() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("redis-tls-\(UInt32.random(in: 0...UInt32.max))").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (certificate, key) = try SelfSignedCertificate.make(in: directory)
        let server = try RedisServer(tlsCertificate: certificate, key: key)
        let trusted = try Self.link("rediss://127.0.0.1:\(server.port)") {
            $0.tls = try! TLSClientContext(caFile: certificate)
            $0.clientName = "over-tls"
        }
        let untrusted = try Self.link("rediss://127.0.0.1:\(server.port)") { $0.tls = try! TLSClientContext(caFile: nil) }
        defer {
            trusted.close()
            untrusted.close()
        }
        let driver = PollDriver([trusted, untrusted])
        #expect(driver.run { trusted.isReady })
        let replies = Replies()
        for index in 0..<1000 { Self.send(trusted, "SET", ["k\(index)", String(repeating: "v", count: index)], into: replies) }
        Self.send(trusted, "GET", ["k999"], into: replies)
        #expect(driver.run { replies.results.count == 1001 })
        #expect(try replies.results.last?.get().string == String(repeating: "v", count: 999))
        #expect(driver.run { untrusted.lastError.contains("not trusted") })
        #expect(untrusted.lastError.contains("self-signed") || untrusted.lastError.contains("self signed"))
        #expect(!untrusted.isReady)
        // A plain client cannot speak to the TLS port: the link never signs in.
        let plain = try Self.link("redis://127.0.0.1:\(server.port)") { $0.clientName = "plain" }
        defer { plain.close() }
        #expect(!PollDriver([plain]).run(for: .milliseconds(500)) { plain.isReady })
    }
}
