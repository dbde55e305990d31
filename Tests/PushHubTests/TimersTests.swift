import TestSupport
import Testing

@testable import PushHub

@Suite struct TimersTests {
    @Test("pops due entries in deadline order, never early (seeded random schedule)")
    func ordering() {
        var timers = Timers<UInt64>()
        var generator = SeededGenerator(state: 42)
        var deadlines: [UInt64] = []
        for token in 0..<1000 {
            let deadline = UInt64.random(in: 0...10_000, using: &generator)
            deadlines.append(deadline)
            timers.schedule(UInt64(token), at: deadline)
        }
        if let earliest = deadlines.min(), earliest > 0 { #expect(timers.popDue(now: earliest - 1) == nil) }
        var popped: [UInt64] = []
        while let entry = timers.popDue(now: 5000) {
            #expect(entry.deadline <= 5000)
            #expect(deadlines[Int(entry.payload)] == entry.deadline)
            popped.append(entry.deadline)
        }
        #expect(popped == popped.sorted())
        #expect(popped.count == deadlines.filter { $0 <= 5000 }.count)
        #expect(timers.nextDeadline.map { $0 > 5000 } ?? true)
    }
}
