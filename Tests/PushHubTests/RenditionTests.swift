import Testing

@testable import PushHub

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
        #expect(Rendition.key(for: RenderTarget.latest, thresholds: thresholds) == 2)
    }
}
