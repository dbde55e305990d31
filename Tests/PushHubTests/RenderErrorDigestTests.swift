import Testing

@testable import PushHub

@Suite struct RenderErrorDigestTests {
    static func report(_ screen: String = "home", version: Int = 3, component: String = "Carousel") -> RenderErrorReport
    {
        RenderErrorReport(screen: screen, version: version, component: component, message: "bad item")
    }

    @Test func theFirstReportMakesAnEventAtOnceAndTheRestOfTheMinuteMakeOne() throws {
        var digest = RenderErrorDigest()
        let noted = digest.note(Self.report(), now: 0, wallNow: 1000)
        let first = try #require(noted)
        #expect(first["errors"] == .number(1) && first["screen"] == .string("home") && first["version"] == .number(3))
        for i in 0..<1000 {
            #expect(
                digest.note(Self.report(component: i % 2 == 0 ? "Carousel" : "Text"), now: UInt64(i), wallNow: 2000)
                    == nil)
        }
        #expect(digest.due(now: RenderErrorDigest.window - 1, wallNow: 3000).isEmpty)
        let due = digest.due(now: RenderErrorDigest.window, wallNow: 61_000)
        #expect(due.count == 1)
        #expect(due.first?.data["errors"] == .number(1000))
        #expect(due.first?.data["samples"]?.arrayValue?.count == 2, "distinct samples only")
        // A quiet window after that ends the entry; the next report makes an event at once again.
        #expect(digest.due(now: 2 * RenderErrorDigest.window, wallNow: 121_000).isEmpty)
        #expect(digest.entries.isEmpty && digest.nextDeadline == nil)
        #expect(digest.note(Self.report(), now: 2 * RenderErrorDigest.window, wallNow: 122_000) != nil)
    }

    @Test func eachScreenAndVersionIsItsOwnWindow() {
        var digest = RenderErrorDigest()
        #expect(digest.note(Self.report(version: 3), now: 0, wallNow: 0) != nil)
        #expect(digest.note(Self.report(version: 4), now: 0, wallNow: 0) != nil)
        #expect(digest.note(Self.report("news", version: 3), now: 0, wallNow: 0) != nil)
        #expect(digest.note(Self.report(version: 3), now: 1, wallNow: 0) == nil)
    }
}
