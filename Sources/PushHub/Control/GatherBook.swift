/// The control plane's scatter-gathers in flight (`Gather`), by id.
///
/// Invariant: a gather is here from its start until it finishes (complete, expired or dropped);
/// ids are never reused. A class, so that a gather's `finish` may start another gather (a
/// publish dry run asks twice): a struct's mutating method would hold exclusive access to the
/// book while `finish` runs inside it, and the second start would be a conflicting access.
final class GatherBook {
    private var gathers: [GatherID: Gather] = [:]
    private var nextID: GatherID = 1

    /// Starts a gather awaiting `loops` answers and the other hubs in `remote` (nil: learnt
    /// later, `expectRemote`); one that awaits nothing finishes at once.
    func start(
        loops: Int, remote: Set<String>?, deadline: UInt64, finish: @escaping ([LoopAnswer], Bool) -> Void
    ) -> GatherID {
        let id = nextID
        nextID += 1
        if loops == 0 && remote?.isEmpty == true {
            finish([], true)
        } else {
            gathers[id] = Gather(loops: loops, remote: remote, deadline: deadline, finish: finish)
        }
        return id
    }

    /// A loop's answer to gather `id`.
    func add(_ answer: LoopAnswer, to id: GatherID) {
        if let gather = gathers[id], gather.add(answer) { gathers[id] = nil }
    }

    /// Another hub's answers to gather `id`.
    func add(_ answers: [LoopAnswer], from hub: String, to id: GatherID) {
        if let gather = gathers[id], gather.addRemote(from: hub, answers) { gathers[id] = nil }
    }

    /// The other hubs gathers `ids` wait for, now known.
    func expect(_ hubs: Set<String>, in ids: [GatherID]) {
        for id in ids {
            if let gather = gathers[id], gather.expectRemote(hubs) { gathers[id] = nil }
        }
    }

    /// Gather `id` finishes with what it has at `deadline`.
    func setDeadline(_ deadline: UInt64, of id: GatherID) {
        if let gather = gathers[id] { gather.deadline = deadline }
    }

    /// Forgets gather `id` unfinished (the change it waits for will not be delivered).
    func drop(_ id: GatherID) { gathers[id] = nil }

    /// Finishes the gathers whose deadline passed with what they have.
    func expire(now: UInt64) {
        for (id, gather) in gathers where now >= gather.deadline {
            gathers[id] = nil
            gather.expire()
        }
    }

    var nextDeadline: UInt64 { gathers.values.map(\.deadline).min() ?? .max }
}
