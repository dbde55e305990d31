import Foundation
import Glibc
import Testing
import WSProtocol

@testable import PushHub

/// Reads see only committed state by construction (`AdminAPI`): a call that only reads is
/// authenticated and answered once everything accepted before it is durable — so a token, a
/// screen or a version that a failed write takes back is never shown, nor lets a read in.
/// The write fails for real: the data dir's journal is pointed at /dev/full (ENOSPC).
@Suite final class AdminCommittedReadsTests: AdminRequests {
    let directory: String
    let plane: ControlPlane

    init() throws {
        directory = FileManager.default.temporaryDirectory.appending(path: "pushhub-reads-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        plane = Self.makePlane(dataDirectory: directory)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// Ends the tick with every write to the journal failing, as on a full disk.
    func tickOnFullDisk() throws {
        let journal = directory + "/" + StateJournal.journalFile
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap(Int32.init)
        let fd = try #require(
            descriptors.first {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == journal
            },
            "the journal is open")
        let saved = dup(fd), full = open("/dev/full", O_WRONLY)
        try #require(saved >= 0 && full >= 0 && dup2(full, fd) == fd)
        defer {
            dup2(saved, fd)
            close(saved)
            close(full)
        }
        tick()
    }

    @Test("a token whose creation fails to commit never lets a read in, though the read came in the same tick")
    func tokenOfAFailedCommit() throws {
        addToken("viewer", [.read])
        let whoAmI = send(request("GET", "/v1/whoami", token: "s-viewer"))
        let stats = send(request("GET", "/v1/stats", token: "s-viewer"))
        #expect(whoAmI.response == nil && stats.response == nil, "a read waits for the commit")
        try tickOnFullDisk()
        #expect(whoAmI.response?.status == 401)
        #expect(stats.response?.status == 401)
    }

    @Test("a change made with a token of the same batch fails with it, and the token is refused after")
    func changeWithATokenOfAFailedCommit() throws {
        addToken("ci", [.publish])
        let publish = send(request("PUT", "/v1/screens/home", token: "s-ci"), body: #"{"type":"text","text":"hi"}"#)
        try tickOnFullDisk()
        #expect(publish.response?.status == 503 && publish.response?.errorCode == "storage_failed")
        #expect(answer(request("GET", "/v1/screens/home", token: "secret-token"))?.status == 404)
        #expect(answer(request("PUT", "/v1/screens/home", token: "s-ci"), body: "{}")?.status == 401)
    }

    @Test("a dry run in the same tick as a publish that fails answers from the committed screen")
    func dryRunAfterAFailedPublish() throws {
        let publish = send(
            request("PUT", "/v1/screens/home", token: "secret-token"), body: #"{"type":"text","text":"1"}"#)
        let dryRun = send(
            request("PUT", "/v1/screens/home?dry_run=true", token: "secret-token"), body: #"{"type":"text","text":"2"}"#
        )
        try tickOnFullDisk()
        #expect(publish.response?.status == 503)
        let answer = try JSONReader.parse(try #require(dryRun.response).body)
        #expect(answer["from"] == .null && answer["version"] == .number(1), "\(answer)")
    }

    @Test("a read in the same tick as a change that commits sees it, once it is durable")
    func readAfterACommittedChange() throws {
        let publish = send(
            request("PUT", "/v1/screens/home", token: "secret-token"), body: #"{"type":"text","text":"1"}"#)
        let read = send(request("GET", "/v1/screens/home", token: "secret-token"))
        #expect(read.response == nil)
        tick()
        #expect(publish.response?.status == 200)
        #expect(try JSONReader.parse(try #require(read.response).body)["version"] == .number(1))
    }
}
