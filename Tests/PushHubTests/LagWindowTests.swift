import Testing

@testable import PushHub

@Suite struct LagWindowTests {
    static let second: UInt64 = 1_000_000_000

    @Test("the loop-lag gauge keeps a peak for one to two windows, whoever reads it and how often")
    func windows() {
        let lag = LagWindow()
        lag.note(5_000_000, now: 1 * Self.second)
        lag.note(2_000_000, now: 3 * Self.second)
        #expect(lag.longest(now: 4 * Self.second) == 5_000_000)
        #expect(lag.longest(now: 4 * Self.second) == 5_000_000)  // a second scraper sees the same peak
        #expect(lag.longest(now: 15 * Self.second) == 5_000_000)  // the window before still counts
        lag.note(3_000_000, now: 16 * Self.second)
        #expect(lag.longest(now: 21 * Self.second) == 3_000_000)  // 1–10 s is two windows old now
        #expect(lag.longest(now: 45 * Self.second) == 0)  // nothing for two windows
    }
}
