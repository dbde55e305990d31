import Foundation
import Testing
import WSProtocol

@testable import PushHub

/// The console's routes (issue 14): the page served without a token, `/v1/whoami`, and the audit
/// ring behind `/v1/audit`.
@Suite struct ConsoleTests: AdminRequests {
    let plane = ConsoleTests.makePlane()

    func json(_ response: Response) throws -> JSONValue { try JSONReader.parse(response.body) }

    /// clients/console/ in this checkout.
    static let consoleDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appending(path: "clients/console")

    @Test("every file of clients/console is served without a token, byte for byte, with its type")
    func servesEveryFile() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.consoleDirectory.path).sorted()
        #expect(names.contains("index.html"))
        for name in names {
            let response = handle(request("GET", "/console/" + name))
            #expect(response.status == 200, "\(name)")
            let onDisk = try Data(contentsOf: Self.consoleDirectory.appending(path: name))
            #expect(response.body == Array(onDisk), "\(name) differs from the embedded copy: rebuild")
            #expect(response.headers["Content-Type"] == ConsoleRoutes.contentType(of: name))
        }
        let page = handle(request("GET", "/console"))
        #expect(page.status == 200 && page.headers["Content-Type"] == "text/html; charset=utf-8")
        // The console imports the apps' JavaScript client (patches, hashes, buckets) from beside it.
        #expect(handle(request("GET", "/console/pushhub-client.js")).body == Array(clientModuleSource.utf8))
        #expect(page.body == handle(request("GET", "/console/index.html")).body)
    }

    @Test("the page may load nothing from elsewhere and may not be framed; an ETag answers 304")
    func headers() {
        let page = handle(request("GET", "/console"))
        let policy = page.headers["Content-Security-Policy"] ?? ""
        #expect(policy.contains("default-src 'self'") && policy.contains("frame-ancestors 'none'"))
        #expect(page.headers["X-Content-Type-Options"] == "nosniff")
        let etag = page.headers["ETag"] ?? "-"
        #expect(handle(request("GET", "/console", headers: [("If-None-Match", etag)])).status == 304)
    }

    @Test("only embedded files are served: an unknown name or a path out of the directory is a 404")
    func unknownFiles() {
        #expect(handle(request("GET", "/console/nothing.js")).status == 404)
        #expect(handle(request("GET", "/console/../admin.token")).status == 404)
        #expect(handle(request("GET", "/consoles")).status == 401)  // not the console: an API path
        #expect(handle(request("POST", "/console")).status == 405)
        #expect(handle(request("HEAD", "/console")).headers["Allow"] == "GET")
    }

    @Test("/v1/whoami names the token and what it allows; it needs a token")
    func whoAmI() throws {
        #expect(handle(request("GET", "/v1/whoami")).status == 401)
        let root = try json(handle(request("GET", "/v1/whoami", token: "secret-token")))
        #expect(root["name"] == .string("root"))
        #expect(root["scopes"] == .array([.string("admin")]))
        #expect(root["allows"]?.arrayValue?.count == AdminScope.allCases.count)
        let reader = AdminToken(name: "viewer", scopes: [.read], digest: "", createdAt: 0).whoAmI
        #expect(reader["allows"] == .array([.string("read")]))
        let publisher = AdminToken(name: "ci", scopes: [.publish], digest: "", createdAt: 0).whoAmI
        #expect(publisher["allows"] == .array([.string("publish"), .string("read")]))
    }

    @Test("a refused call is in /v1/audit, newest first, with its token name and error code")
    func auditRoute() throws {
        _ = handle(request("GET", "/v1/stats", token: "wrong"))
        _ = handle(request("DELETE", "/v1/screens/home", token: "secret-token"))  // 404: audited
        let answer = try json(handle(request("GET", "/v1/audit?limit=10", token: "secret-token")))
        let entries = try #require(answer["entries"]?.arrayValue)
        #expect(entries.count == 2)
        #expect(entries[0]["path"] == .string("/v1/screens/home") && entries[0]["token"] == .string("root"))
        #expect(entries[0]["status"] == .number(404) && entries[0]["error"] == .string("not_found"))
        #expect(entries[1]["status"] == .number(401) && entries[1]["token"] == .string("-"))
        #expect(handle(request("GET", "/v1/audit?limit=0", token: "secret-token")).status == 400)
        #expect(handle(request("GET", "/v1/audit?limit=9999", token: "secret-token")).status == 400)
        #expect(handle(request("GET", "/v1/audit?limt=3", token: "secret-token")).status == 400)
    }

    @Test("reads and dry runs change nothing and are not audited when they succeed; everything else is")
    func whatIsAudited() {
        let syncDryRun = Array(#"{"target":{"all":true},"dry_run":true}"#.utf8)
        let sync = Array(#"{"target":{"all":true},"dry_run":false}"#.utf8)
        #expect(!Self.changes(request("GET", "/v1/screens"), body: []))
        #expect(!Self.changes(request("HEAD", "/healthz"), body: []))
        #expect(!Self.changes(request("POST", "/v1/syncs"), body: syncDryRun))
        #expect(!Self.changes(request("PUT", "/v1/screens/home?dry_run=true"), body: []))
        #expect(Self.changes(request("POST", "/v1/syncs"), body: sync))
        #expect(Self.changes(request("POST", "/v1/syncs"), body: Array("not json".utf8)))
        #expect(Self.changes(request("PUT", "/v1/screens/home?dry_run=false"), body: []))
        #expect(Self.changes(request("POST", "/v1/cohorts/beta/users"), body: syncDryRun))
        #expect(Self.changes(request("DELETE", "/v1/screens/home"), body: []))
    }

    @Test("GET /v1/syncs lists the live syncs; its limit is checked")
    func syncList() throws {
        #expect(try json(handle(request("GET", "/v1/syncs", token: "secret-token"))) == .object(["syncs": .array([])]))
        #expect(handle(request("GET", "/v1/syncs?limit=0", token: "secret-token")).status == 400)
        #expect(handle(request("GET", "/v1/syncs?limit=x", token: "secret-token")).status == 400)
        #expect(handle(request("DELETE", "/v1/syncs", token: "secret-token")).status == 405)
    }

    @Test("GET /v1/clients/summary answers counts only (no loops here: none)")
    func clientSummary() throws {
        let summary = try json(handle(request("GET", "/v1/clients/summary", token: "secret-token")))
        #expect(summary == .object(["count": .number(0), "by_platform": .array([]), "by_app_version": .array([])]))
    }

    @Test("the audit ring keeps the newest entries, newest first, when it wraps", arguments: [1, 3, 7, 8, 20])
    func ringWraps(_ appended: Int) {
        var ring = AuditRing(capacity: 7)
        for i in 0..<appended {
            ring.append(AuditRing.Entry(at: i, token: "t", method: "PUT", path: "/p", status: 200, error: nil))
        }
        #expect(ring.count == min(appended, 7))
        let newest = (max(0, appended - 7)..<appended).reversed().map { $0 }
        #expect(ring.recent(100).map(\.at) == newest)
        #expect(ring.recent(2).map(\.at) == Array(newest.prefix(2)))
    }

    @Test("/v1/stats tells the loops and the memory in use")
    func stats() throws {
        let stats = try json(handle(request("GET", "/v1/stats", token: "secret-token")))
        #expect(stats["loops"] == .number(Double(HubConfig().effectiveLoops)))
        #expect((stats["memory_bytes"]?.numberValue ?? 0) > 1_000_000)
    }
}
