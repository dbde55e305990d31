import Foundation
import Testing

@testable import PushHub

@Suite struct ScreenStoreTests {
    static func directory() -> String { NSTemporaryDirectory() + "pushhub-store-\(UUID().uuidString)" }

    @Test("versions increase, only the last N are kept, and numbering survives a delete")
    func versions() throws {
        let store = try ScreenStore(dataDirectory: nil, keepVersions: 3)
        for n in 1...5 { _ = try store.publish("s", tree: .number(Double(n)), now: n) }
        #expect(store.current("s")?.version == 5)
        #expect(store.history("s")?.map(\.version) == [3, 4, 5])
        #expect(store.version("s", 2) == nil)
        #expect(try store.delete("s")?.version == 5)
        #expect(store.current("s") == nil)
        #expect(try store.publish("s", tree: .null, now: 6).new.version == 6)
    }

    @Test("a restart restores screens from snapshot + journal, replaying nothing twice")
    func restart() throws {
        let directory = Self.directory()
        do {
            let store = try ScreenStore(dataDirectory: directory, keepVersions: 4, snapshotEvery: 5)
            for n in 1...12 { _ = try store.publish("a", tree: .object(["n": .number(Double(n))]), now: n) }
            _ = try store.publish("b", tree: .string("b1"), now: 13)
            _ = try store.delete("b")
            _ = try store.publish("c", tree: .bool(true), now: 15)
        }
        #expect(FileManager.default.fileExists(atPath: directory + "/screens.snapshot.json"))
        let restored = try ScreenStore(dataDirectory: directory, keepVersions: 4, snapshotEvery: 5)
        #expect(restored.current("a")?.version == 12)
        #expect(restored.history("a")?.map(\.version) == [9, 10, 11, 12])
        #expect(restored.current("a")?.tree == .object(["n": .number(12)]))
        #expect(restored.current("b") == nil)
        #expect(try restored.publish("b", tree: .null, now: 16).new.version == 2)
        #expect(restored.current("c")?.tree == .bool(true))
    }

    @Test("a journal record that is cut short is dropped; corruption before the tail stops the restore")
    func tornAndCorrupt() throws {
        let directory = Self.directory()
        do {
            let store = try ScreenStore(dataDirectory: directory)
            for n in 1...3 { _ = try store.publish("a", tree: .number(Double(n)), now: n) }
        }
        let journal = directory + "/screens.journal"
        var bytes = try #require(try FileBytes.read(journal))
        let intact = bytes
        bytes += [9, 0, 0, 0, 1, 2]
        try FileBytes.writeAtomically(bytes, to: journal)
        #expect(try ScreenStore(dataDirectory: directory).current("a")?.version == 3)
        #expect(try FileBytes.read(journal) == intact)  // the torn tail was cut off
        bytes = intact
        bytes[10] ^= 0xFF
        try FileBytes.writeAtomically(bytes, to: journal)
        #expect(throws: Journal.Corruption.self) { try ScreenStore(dataDirectory: directory) }
    }
}

@Suite struct RenditionTests {
    static let tree = try! JSONReader.parse(
        #"""
        {"children":[{"id":"a","min_app_version":"5.3.0","type":"chart","fallback":{"id":"a","type":"image"}},
                     {"id":"b","min_app_version":"6.0.0","type":"video"},{"id":"c","type":"text"}]}
        """#)

    @Test("semantic versions order as SemVer says")
    func semver() {
        let ordered = [
            "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.2",
            "1.10.0", "2.0.0",
        ]
        let versions = ordered.compactMap(SemanticVersion.init)
        #expect(versions.count == ordered.count)
        #expect(versions == versions.sorted())
        #expect(SemanticVersion("5.3") == SemanticVersion("5.3.0"))
        #expect(SemanticVersion("5.x") == nil && SemanticVersion("") == nil && SemanticVersion("1.2.3.4") == nil)
    }

    @Test(
        "the capability filter: fallback below the version, the node without its keys at or above, removed without fallback"
    )
    func filter() throws {
        let old = Rendition.render(Self.tree, for: RenderTarget(appVersion: SemanticVersion("5.2.9")))
        #expect(JSONWriter.string(old) == #"{"children":[{"id":"a","type":"image"},{"id":"c","type":"text"}]}"#)
        let middle = Rendition.render(Self.tree, for: RenderTarget(appVersion: SemanticVersion("5.3.0")))
        #expect(JSONWriter.string(middle) == #"{"children":[{"id":"a","type":"chart"},{"id":"c","type":"text"}]}"#)
        let latest = Rendition.render(Self.tree, for: .latest)
        #expect(
            JSONWriter.string(latest)
                == #"{"children":[{"id":"a","type":"chart"},{"id":"b","type":"video"},{"id":"c","type":"text"}]}"#)
    }

    @Test("clients meeting the same thresholds share one rendition key")
    func keys() {
        let thresholds = Rendition.thresholds(in: Self.tree)
        #expect(thresholds.map(\.description) == ["5.3.0", "6.0.0"])
        let keys = ["1.0.0", "5.2.9", "5.3.0", "5.9.9", "6.0.0", "7.1.0"].map {
            Rendition.key(for: RenderTarget(appVersion: SemanticVersion($0)), thresholds: thresholds)
        }
        #expect(keys == [0, 0, 1, 1, 2, 2])
        #expect(Rendition.key(for: .latest, thresholds: thresholds) == 2)
    }
}
