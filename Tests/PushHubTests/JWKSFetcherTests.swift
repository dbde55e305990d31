import Foundation
import HTTP1
import Testing

@testable import PushHub

/// An `HTTPFetching` whose answers the test gives, one request at a time.
final class ScriptedFetching: HTTPFetching {
    private(set) var requests: [(request: HTTP1Request, origin: HTTPOrigin, done: (HTTP1Outcome) -> Void)] = []

    func send(
        _ request: HTTP1Request, to origin: HTTPOrigin, timeout: UInt64, now: UInt64,
        done: @escaping (HTTP1Outcome) -> Void
    ) {
        requests.append((request, origin, done))
    }

    /// Answers the oldest request.
    func answer(_ outcome: HTTP1Outcome) {
        precondition(!requests.isEmpty, "no request to answer")
        requests.removeFirst().done(outcome)
    }

    static func jwks(_ body: [UInt8], status: Int = 200, headers: [(name: String, value: String)] = []) -> HTTP1Outcome
    {
        .response(HTTP1Response(status: status, headers: [("Content-Type", "application/json")] + headers, body: body))
    }
}

/// The JWKS fetcher on the control plane's side (DESIGN §18), with a scripted HTTP peer: what it
/// asks, which answers change the keys, what it keeps on disk, and what the loops hear.
@Suite("JWKS fetcher: keys swapped in, bad answers never empty the set, kept in jwks.json, loops told")
struct JWKSFetcherTests {
    static let url = try! HTTPURL(parsing: "https://idp.test/.well-known/jwks.json")
    static let second: UInt64 = 1_000_000_000
    /// When every answer arrives, by the fetcher's clock.
    static let answeredAt: UInt64 = 5000 * second

    /// A fetcher, its store, its HTTP peer and one loop's mailbox, in a fresh data directory.
    struct Rig {
        let store = JWTKeyStore(
            JWTKeySet(configured: [JWTKey(secret: Array("s".utf8))]), fetchesKeys: true, metrics: JWTMetrics())
        let client = ScriptedFetching()
        let loop = Mailbox(wake: {})
        let directory: String
        let fetcher: JWKSFetcher
        var cacheFile: String { directory + "/jwks.json" }

        init(directory: String? = nil, memoryOnly: Bool = false, url: HTTPURL = JWKSFetcherTests.url) throws {
            let directory = directory ?? NSTemporaryDirectory() + "pushhub-jwks-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            self.directory = directory
            fetcher = JWKSFetcher(url: url, store: store, cacheFile: memoryOnly ? nil : directory + "/jwks.json")
            fetcher.client = client
            fetcher.clock = { JWKSFetcherTests.answeredAt }
            fetcher.attach(loops: [loop])
        }

        /// How many `keysRefreshed` the loop was posted since the last call.
        func refreshesPosted() -> Int {
            loop.drain().filter {
                if case .keysRefreshed = $0 { return true }
                return false
            }.count
        }

        var kids: [String?] { store.keys.published.map(\.kid) }
    }

    static func document(_ names: [String]) throws -> [UInt8] {
        let keys = try JWTTestKeys.shared()
        return JSONWriter.write(.object(["keys": .array(names.map { .object(keys.jwks[$0]!) })]))
    }

    @Test("the first tick asks for the JWKS; the answer's keys verify tokens, the loops hear, jwks.json keeps it")
    func firstFetch() throws {
        let rig = try Rig()
        #expect(rig.fetcher.nextDeadline == 0)
        rig.fetcher.tick(now: Self.second)
        let request = try #require(rig.client.requests.first)
        #expect(request.request.method == "GET" && request.request.target == "/.well-known/jwks.json")
        #expect(request.origin == HTTPOrigin(isTLS: true, host: "idp.test", port: 443))
        #expect(rig.refreshesPosted() == 0)
        rig.client.answer(
            ScriptedFetching.jwks(
                try Self.document(["rsa", "p256"]), headers: [("Cache-Control", "max-age=600"), ("ETag", "\"v1\"")]))
        #expect(rig.kids == ["rsa", "p256"])
        #expect(rig.refreshesPosted() == 1)
        #expect(rig.store.metrics.fetches(.ok) == 1)
        #expect(rig.fetcher.nextDeadline! > 600 * Self.second)
        let keys = try JWTTestKeys.shared()
        let token = try keys.token(["sub": .string("u1")], alg: .es256, key: "p256", kid: "p256")
        #expect(try JWTVerifier(keys: rig.store).verify(token, now: 0).subject == "u1")
        let kept = try JSONReader.parse(try #require(try FileBytes.read(rig.cacheFile)))
        #expect(kept["url"] == .string(Self.url.description))
        #expect(kept["jwks"]?["keys"]?.arrayValue?.count == 2)
        #expect(rig.store.metrics.exposition.contains("pushhub_jwks_keys 2\n"))
    }

    @Test(
        "a bad answer keeps the keys in use and counts a failure",
        arguments: [
            ("garbage", ScriptedFetching.jwks(Array("<html>sorry</html>".utf8))),
            ("500", ScriptedFetching.jwks(Array("{}".utf8), status: 500)),
            ("no keys", ScriptedFetching.jwks(Array("{\"keys\":[]}".utf8))),
            ("no answer", HTTP1Outcome.failed("connection refused")),
            ("unexpected 304", ScriptedFetching.jwks([], status: 304)),
        ])
    func badAnswers(_ name: String, _ outcome: HTTP1Outcome) throws {
        let rig = try Rig()
        rig.fetcher.tick(now: Self.second)
        rig.client.answer(ScriptedFetching.jwks(try Self.document(["ed25519"])))
        _ = rig.refreshesPosted()
        let kept = try FileBytes.read(rig.cacheFile)
        // The refresh: a bad answer.
        rig.fetcher.tick(now: rig.fetcher.nextDeadline!)
        if name == "unexpected 304" {
            // With keys in use the 304 is an answer; from the first fetch on, it is one without keys.
            let fresh = try Rig()
            fresh.fetcher.tick(now: Self.second)
            fresh.client.answer(outcome)
            #expect(fresh.kids.isEmpty && fresh.store.metrics.fetches(.failed) == 1)
            rig.client.answer(outcome)
            #expect(rig.store.metrics.fetches(.notModified) == 1)
            return
        }
        rig.client.answer(outcome)
        #expect(rig.kids == ["ed25519"], "\(name)")
        #expect(rig.store.metrics.fetches(.failed) == 1)
        #expect(rig.refreshesPosted() == 1)
        #expect(try FileBytes.read(rig.cacheFile) == kept)
        // Retried after 1 s, not at the next max-age.
        #expect(rig.fetcher.nextDeadline == Self.answeredAt + Self.second)
    }

    @Test("a refresh sends If-None-Match; a 304 keeps the keys and counts not_modified")
    func notModified() throws {
        let rig = try Rig()
        rig.fetcher.tick(now: Self.second)
        rig.client.answer(ScriptedFetching.jwks(try Self.document(["rsa"]), headers: [("ETag", "W/\"abc\"")]))
        rig.fetcher.tick(now: rig.fetcher.nextDeadline!)
        let request = try #require(rig.client.requests.first?.request)
        #expect(request.headers.contains { $0.name == "If-None-Match" && $0.value == "W/\"abc\"" })
        rig.client.answer(ScriptedFetching.jwks([], status: 304, headers: [("Cache-Control", "max-age=120")]))
        #expect(rig.kids == ["rsa"] && rig.store.metrics.fetches(.notModified) == 1)
    }

    @Test("a rotated-in kid is fetched once however many hellos name it, at most once per 10 s")
    func rotation() throws {
        let rig = try Rig()
        let start = Self.answeredAt
        rig.fetcher.tick(now: start)
        rig.client.answer(ScriptedFetching.jwks(try Self.document(["rsa"])))
        _ = rig.refreshesPosted()
        // 3 s later the provider rotates in p256 and tokens name it: not yet (10 s), released at once.
        rig.fetcher.unknownKidReported("p256", now: start + 3 * Self.second)
        #expect(rig.client.requests.isEmpty && rig.refreshesPosted() == 1)
        #expect(rig.fetcher.nextDeadline == start + 10 * Self.second)
        rig.fetcher.tick(now: start + 10 * Self.second)
        for _ in 0..<50 { rig.fetcher.unknownKidReported("p256", now: start + 10 * Self.second) }
        #expect(rig.client.requests.count == 1)
        rig.client.answer(ScriptedFetching.jwks(try Self.document(["rsa", "p256"])))
        #expect(rig.kids == ["rsa", "p256"] && rig.refreshesPosted() == 1)
    }

    @Test("at start the kept answer is read back (a restart while the provider is down still verifies)")
    func restore() throws {
        let first = try Rig()
        first.fetcher.tick(now: Self.second)
        first.client.answer(ScriptedFetching.jwks(try Self.document(["ed25519", "p256"])))
        let again = try Rig(directory: first.directory)
        #expect(again.kids == ["ed25519", "p256"])
        #expect(again.store.metrics.exposition.contains("pushhub_jwks_keys 2\n"))
        again.fetcher.tick(now: Self.second)
        again.client.answer(.failed("connection refused"))
        #expect(again.kids == ["ed25519", "p256"])
        // Another URL's answer, and a damaged file, are not read back.
        let other = try Rig(directory: first.directory, url: try HTTPURL(parsing: "https://other.test/jwks"))
        #expect(other.kids.isEmpty)
        for damage in [Array("{\"url\":".utf8), Array("{\"url\":\"\(Self.url)\",\"jwks\":{\"keys\":[]}}".utf8)] {
            try Data(damage).write(to: URL(fileURLWithPath: first.cacheFile))
            #expect(try Rig(directory: first.directory).kids.isEmpty)
        }
    }

    @Test("jwks.json cut at any offset is ignored; a byte flipped anywhere restores the same keys or none")
    func keptFileDamage() throws {
        let first = try Rig()
        first.fetcher.tick(now: Self.second)
        first.client.answer(ScriptedFetching.jwks(try Self.document(["ed25519", "p256"])))
        let good = try #require(try FileBytes.read(first.cacheFile))
        let original = try JSONReader.parse(good)
        let directory = NSTemporaryDirectory() + "pushhub-jwks-damage-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }  // try?: a leftover temp folder is harmless
        func restored(_ bytes: [UInt8]) throws -> [String?] {
            try Data(bytes).write(to: URL(fileURLWithPath: directory + "/jwks.json"))
            return try Rig(directory: directory).kids
        }
        for cut in 0..<good.count {
            #expect(try restored(Array(good[..<cut])).isEmpty, "cut at \(cut)")
        }
        for offset in good.indices {
            var flipped = good
            flipped[offset] ^= 0x01
            // Only a flip that leaves every member but `saved_at` as it was may restore the keys.
            let parsed = try? JSONReader.parse(flipped)  // try?: a flip that breaks the JSON is one outcome
            let harmless = ["url", "jwks", "jwks_sha256"].allSatisfy { parsed?[$0] == original[$0] }
            #expect(try restored(flipped) == (harmless ? ["ed25519", "p256"] : []), "flip at \(offset)")
        }
    }

    @Test("without a data directory nothing is written")
    func memoryOnly() throws {
        let rig = try Rig(memoryOnly: true)
        rig.fetcher.tick(now: Self.second)
        rig.client.answer(ScriptedFetching.jwks(try Self.document(["rsa"])))
        #expect(rig.kids == ["rsa"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: rig.directory).isEmpty)
    }

    @Test("without a JWKS the metrics name the families with no series")
    func metricsWithoutJWKS() {
        let text = JWTMetrics().exposition
        #expect(text.contains("# TYPE pushhub_jwks_fetches_total counter\n"))
        #expect(!text.contains("\npushhub_jwks_keys ") && !text.contains("\npushhub_jwks_fetches_total{"))
        #expect(text.contains("pushhub_jwt_refused_total{reason=\"unknown_kid\"} 0\n"))
    }
}
