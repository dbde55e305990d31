import Testing

@testable import PushHub

/// DESIGN §5's spread, shared by socket deliveries and silent pushes.
@Suite struct SpreadScheduleTests {
    @Test("the i-th of n is due at spread × i / n")
    func evenly() {
        let spread: UInt64 = 30_000_000_000
        #expect(
            (0..<4).map { SpreadSchedule.delay(index: $0, of: 4, over: spread) } == [
                0, 7_500_000_000, 15_000_000_000, 22_500_000_000,
            ])
        #expect(SpreadSchedule.delay(index: 0, of: 1, over: spread) == 0)
    }

    @Test("an hour's spread over ten million devices neither traps nor loses precision")
    func noOverflow() {
        let hour: UInt64 = 3_600_000_000_000
        let count = 10_000_000
        // spread × index overflows 64 bits from index 5,124,096 on.
        let last = SpreadSchedule.delay(index: count - 1, of: count, over: hour)
        #expect(last == hour - hour / UInt64(count))
        #expect(SpreadSchedule.delay(index: count / 2, of: count, over: hour) == hour / 2)
    }
}
