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

    final class Entry: HasDeadline {
        var scheduledDeadline: UInt64?
        var timerIndex: Int32 = -1
    }

    @Test("the deadline heap agrees with a naive list: earlier deadlines move entries, later ones are ignored")
    func deadlineHeap() {
        var heap = DeadlineHeap<Entry>()
        var generator = SeededGenerator(state: 7)
        let entries = (0..<300).map { _ in Entry() }
        var naive: [ObjectIdentifier: UInt64] = [:]
        var now: UInt64 = 0
        for step in 0..<20_000 {
            let entry = entries[Int.random(in: 0..<entries.count, using: &generator)]
            switch step % 4 {
            case 0, 1:
                let deadline = now + UInt64.random(in: 0...1000, using: &generator)
                heap.schedule(entry, at: deadline)
                if let known = naive[ObjectIdentifier(entry)] {
                    naive[ObjectIdentifier(entry)] = min(known, deadline)
                } else {
                    naive[ObjectIdentifier(entry)] = deadline
                }
            case 2:
                heap.remove(entry)
                naive[ObjectIdentifier(entry)] = nil
            default:
                now += UInt64.random(in: 0...200, using: &generator)
                var popped: [UInt64] = []
                while let due = heap.popDue(now: now) {
                    #expect(due.timerIndex == -1 && due.scheduledDeadline == nil)
                    popped.append(naive.removeValue(forKey: ObjectIdentifier(due)) ?? .max)
                }
                #expect(popped == popped.sorted() && popped.allSatisfy { $0 <= now })
                #expect(naive.values.allSatisfy { $0 > now })
            }
            #expect(heap.nextDeadline == naive.values.min())
        }
    }
}
