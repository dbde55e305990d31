import Testing

@testable import PushHub

@Suite struct NearestNameTests {
    @Test("typos find the name meant: swaps, a missing, extra or wrong letter")
    func suggestions() {
        let known = ["platform", "app_version", "user", "users", "cohort", "all", "mandatory"]
        #expect(NearestName.suggest("platfrom", among: known) == "platform")
        #expect(NearestName.suggest("app_verison", among: known) == "app_version")
        #expect(NearestName.suggest("mandatroy", among: known) == "mandatory")
        #expect(NearestName.suggest("usr", among: known) == "user")
        #expect(NearestName.suggest("cohorts", among: known) == "cohort")
        #expect(NearestName.suggest("PLATFORM", among: known) == "platform")
    }

    @Test("nothing is suggested when nothing is close")
    func noSuggestion() {
        #expect(NearestName.suggest("verbose", among: ["user"]) == nil)
        #expect(NearestName.suggest("x", among: []) == nil)
        #expect(NearestName.suggest("abc", among: ["xyz"]) == nil)
    }

    @Test("edit distance counts a swap of neighbours as one edit")
    func distance() {
        #expect(NearestName.editDistance(Array("ab"), Array("ba")) == 1)
        #expect(NearestName.editDistance(Array(""), Array("abc")) == 3)
        #expect(NearestName.editDistance(Array("kitten"), Array("sitting")) == 3)
    }
}
