/// Where a shard keeps one session: its index in the shard's `SessionTable`. The connection of a
/// `/v1/connect` client carries it (4 bytes) and nothing else of the session.
struct SessionSlot: Equatable {
    fileprivate let index: Int32
}

/// A shard's sessions, one per `/v1/connect` connection: a slab (sessions in an array, freed
/// slots reused), so that a session costs its connection 4 bytes and the shard 8, and reaching it
/// from its connection is an array index — no hash lookup on the fan-out path, which does it once
/// per subscriber.
///
/// Invariants: a slot is either in use (returned by `open`, not yet `release`d) or listed in
/// `free`, never both; a free slot holds a `.closed` session (so it keeps no `ReadySession` alive).
struct SessionTable {
    private var slots: [Session] = []
    private var free: [Int32] = []

    /// Sessions in use.
    var count: Int { slots.count - free.count }

    /// Stores a new session; its slot stays its own until `release`.
    mutating func open(_ session: Session) -> SessionSlot {
        if let index = free.popLast() {
            slots[Int(index)] = session
            return SessionSlot(index: index)
        }
        precondition(slots.count < Int(Int32.max), "a shard holds fewer than 2^31 sessions")
        slots.append(session)
        return SessionSlot(index: Int32(slots.count - 1))
    }

    /// The session in `slot`, read and changed in place (a mutating call does not copy the
    /// session out and back).
    subscript(slot: SessionSlot) -> Session {
        get { slots[Int(slot.index)] }
        _modify { yield &slots[Int(slot.index)] }
    }

    /// Gives the slot back once its connection is gone; its session must be closed.
    mutating func release(_ slot: SessionSlot) {
        precondition(slots[Int(slot.index)].isClosed, "a session is closed before its slot is reused")
        free.append(slot.index)
    }
}
