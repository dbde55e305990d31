import Testing

@testable import PushHub

/// The shard's slab of sessions: slots are handed out, changed in place, and reused once their
/// connection is gone.
@Suite struct SessionTableTests {
    @Test("each open session gets its own slot, read back as it was stored")
    func openGivesDistinctSlots() {
        var table = SessionTable()
        let first = table.open(Session(helloDeadline: 10, upgradeToken: nil))
        let second = table.open(Session(helloDeadline: 20, upgradeToken: "t"))
        #expect(first != second)
        #expect(table.count == 2)
        #expect(table[first].helloDeadline == 10)
        #expect(table[second].helloDeadline == 20)
    }

    @Test("a mutating call through the table changes the session in its slot")
    func changesInPlace() {
        var table = SessionTable()
        let slot = table.open(Session(helloDeadline: 10, upgradeToken: nil))
        var actions: [Session.Action] = []
        table[slot].timerFired(now: 10, out: &actions)  // past the hello deadline: closed
        #expect(table[slot].isClosed)
        #expect(actions.count == 1)
    }

    @Test("a released slot is reused by the next session, and the others keep theirs")
    func releasedSlotsAreReused() {
        var table = SessionTable()
        let first = table.open(Session(helloDeadline: 10, upgradeToken: nil))
        let second = table.open(Session(helloDeadline: 20, upgradeToken: nil))
        table[first].closed()
        table.release(first)
        #expect(table.count == 1)
        let third = table.open(Session(helloDeadline: 30, upgradeToken: nil))
        #expect(third == first)
        #expect(table[third].helloDeadline == 30)
        #expect(table[second].helloDeadline == 20)
        #expect(table.count == 2)
    }
}
