/// The results of every experiment phase, folded from the results log (DESIGN §6 "Goals and
/// results"): per variant the units served and confirmed, and per goal the units that reported
/// it after being served, with the sum and sum of squares of their totals — what the statistics
/// need, and nothing per event.
///
/// Rules, applied in log order (so every hub that folds the same log holds the same tally):
/// - a unit counts in one variant of a phase: its latest. Served a different variant (an
///   override, a new weight), it leaves the old one with everything it counted there and starts
///   afresh in the new one: served, not confirmed, no goals;
/// - `confirmed` counts when it names the unit's current variant;
/// - a goal event counts in every phase that has served the unit before it (events of units
///   never served, or before they were, count nowhere); a unit's value is the sum of its events'.
///
/// Memory: per unit and phase one dictionary slot of 24 bytes — a 64-bit hash of the unit id
/// (collisions are ~3·10⁻⁸ likely among a million units; the ids themselves stay in the log) and
/// 16 bytes of record — in a table kept between 3/8 and 3/4 full, plus, for a unit that reported
/// a goal, a small array on the heap (64 bytes with one goal): 32–128 bytes a unit, 73 measured
/// for a million units of which a third reported a goal (`bench/README.md` "Experiment results").
///
/// Invariant: every count and sum equals the one recomputed from the units' records.
struct ResultsTally {
    /// What one phase (experiment and salt) counts.
    struct Phase {
        /// When its first unit was served (Unix milliseconds).
        var since: Int
        private(set) var variantNames: [String] = []
        private(set) var goalNames: [String] = []
        private var variantIndex: [String: UInt16] = [:]
        private var goalIndex: [String: UInt16] = [:]
        private(set) var variants: [VariantCounts] = []
        fileprivate var units: [Int: UnitRecord] = [:]

        init(since: Int) { self.since = since }

        var unitCount: Int { units.count }

        /// The counts of `variant` (zero when none of its units were served).
        func counts(of variant: String) -> VariantCounts {
            variantIndex[variant].map { variants[Int($0)] } ?? VariantCounts()
        }

        /// The sums of `goal` in `variant`.
        func goal(_ goal: String, in variant: String) -> GoalSums {
            guard let g = goalIndex[goal] else { return GoalSums() }
            let counts = self.counts(of: variant)
            return Int(g) < counts.goals.count ? counts.goals[Int(g)] : GoalSums()
        }

        /// Goal events of goals beyond the first `ResultsTally.maxGoals` of the phase: not counted.
        private(set) var droppedGoalEvents = 0

        /// nil beyond 65,535 variants (a phase never has that many: definitions change its set
        /// only by edits).
        fileprivate mutating func index(ofVariant name: String) -> UInt16? {
            if let index = variantIndex[name] { return index }
            guard variantNames.count < Int(UInt16.max) else { return nil }
            let index = UInt16(variantNames.count)
            variantNames.append(name)
            variantIndex[name] = index
            variants.append(VariantCounts())
            return index
        }

        /// nil once the phase has `maxGoals` goals: goal names come from apps, and one that puts
        /// an order id in its event name must not grow the tally without bound.
        fileprivate mutating func index(ofGoal name: String) -> UInt16? {
            if let index = goalIndex[name] { return index }
            guard goalNames.count < ResultsTally.maxGoals else { return nil }
            let index = UInt16(goalNames.count)
            goalNames.append(name)
            goalIndex[name] = index
            return index
        }

        /// Whether this phase has served `unit`.
        fileprivate func hasServed(_ unit: Int) -> Bool { units[unit] != nil }

        /// Whether `kind` certainly changes nothing here: the unit was served that variant
        /// already, or confirmed it already.
        fileprivate func isRepeat(_ kind: ResultEvent.Kind, unit: Int) -> Bool {
            guard let record = units[unit] else { return false }
            switch kind {
            case .served(let exposure): return variantNames[Int(record.variant)] == exposure.variant
            case .confirmed(let exposure): return record.confirmed && variantNames[Int(record.variant)] == exposure.variant
            case .goal, .release: return false
            }
        }

        fileprivate mutating func apply(_ kind: ResultEvent.Kind, unit: Int) {
            switch kind {
            case .served(let exposure):
                guard let variant = index(ofVariant: exposure.variant) else { return }
                if let old = units[unit] {
                    guard old.variant != variant else { return }
                    withdraw(old)
                }
                units[unit] = UnitRecord(variant: variant)
                variants[Int(variant)].served += 1
            case .confirmed(let exposure):
                guard var record = units[unit], !record.confirmed,
                    variantNames[Int(record.variant)] == exposure.variant
                else { return }
                record.confirmed = true
                units[unit] = record
                variants[Int(record.variant)].confirmed += 1
            case .goal(let event, let value):
                guard var record = units[unit] else { return }
                guard let goal = index(ofGoal: event) else {
                    droppedGoalEvents += 1
                    return
                }
                let added = value ?? 0
                let v = Int(record.variant)
                if variants[v].goals.count <= Int(goal) {
                    variants[v].goals += Array(repeating: GoalSums(), count: Int(goal) + 1 - variants[v].goals.count)
                }
                if let at = record.goals.firstIndex(where: { $0.goal == goal }) {
                    let before = record.goals[at].total
                    let after = before + added
                    record.goals[at].total = after
                    variants[v].goals[Int(goal)].sum += added
                    variants[v].goals[Int(goal)].sumOfSquares += after * after - before * before
                } else {
                    record.goals.append(UnitGoal(goal: goal, total: added))
                    variants[v].goals[Int(goal)].units += 1
                    variants[v].goals[Int(goal)].sum += added
                    variants[v].goals[Int(goal)].sumOfSquares += added * added
                }
                units[unit] = record
            case .release:
                return  // a release's health is folded apart (`ReleaseTally`)
            }
        }

        /// Takes a unit's counts out of its variant.
        private mutating func withdraw(_ record: UnitRecord) {
            let v = Int(record.variant)
            variants[v].served -= 1
            if record.confirmed { variants[v].confirmed -= 1 }
            for goal in record.goals {
                variants[v].goals[Int(goal.goal)].units -= 1
                variants[v].goals[Int(goal.goal)].sum -= goal.total
                variants[v].goals[Int(goal.goal)].sumOfSquares -= goal.total * goal.total
            }
        }
    }

    struct VariantCounts: Equatable {
        var served = 0
        var confirmed = 0
        /// By goal index (shorter when later goals were never reported in this variant).
        var goals: [GoalSums] = []
    }

    /// One goal in one variant: units that reported it, and their totals' sum and sum of squares.
    struct GoalSums: Equatable {
        var units = 0
        var sum = 0.0
        var sumOfSquares = 0.0
    }

    /// One unit in one phase: 16 bytes, plus its goals.
    fileprivate struct UnitRecord {
        var variant: UInt16
        var confirmed = false
        var goals: [UnitGoal] = []
    }

    fileprivate struct UnitGoal {
        var goal: UInt16
        var total: Double
    }

    /// The most goals a phase counts; events of further goal names are dropped and counted
    /// (`Phase.droppedGoalEvents`, in the results answer).
    static let maxGoals = 100

    /// The key of a unit id: a 64-bit hash of its exact bytes (as assignment hashes them: ids
    /// that differ only in Unicode normalisation are different units) — FNV-1a, then MurmurHash3's
    /// final mix so that every bit depends on every byte. The same on every hub and at every start
    /// (Swift's `Hasher` is seeded per process), so two hubs fold a collision alike.
    static func unitKey(_ unit: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in unit.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash = hash &* 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return Int(bitPattern: UInt(hash))
    }

    /// Phases by experiment and salt (`phaseKey`).
    private(set) var phases: [String: Phase] = [:]

    static func phaseKey(experiment: String, salt: String) -> String { experiment + "\u{0}" + salt }

    func phase(experiment: String, salt: String) -> Phase? { phases[Self.phaseKey(experiment: experiment, salt: salt)] }

    /// Whether folding `event` certainly changes nothing (a session of a unit already counted the
    /// same way): the log need not hold it. Goal events are never repeats.
    /// `unitKey`: the event's unit's key (`unitKey(event.unit)`), when the caller has it.
    func isRepeat(_ event: ResultEvent, unitKey: Int? = nil) -> Bool {
        guard let exposure = event.exposure else { return false }
        return phases[Self.phaseKey(experiment: exposure.experiment, salt: exposure.salt)]?.isRepeat(
            event.kind, unit: unitKey ?? Self.unitKey(event.unit)) ?? false
    }

    /// Whether some phase has served `unit` (its goal events count there).
    func hasServed(unit: String) -> Bool { hasServed(unitKey: Self.unitKey(unit)) }

    func hasServed(unitKey: Int) -> Bool { phases.values.contains { $0.hasServed(unitKey) } }

    /// Folds an experiment event (a release event changes nothing here: `ReleaseTally`).
    mutating func fold(_ event: ResultEvent, unitKey: Int? = nil) {
        if case .release = event.kind { return }
        let unit = unitKey ?? Self.unitKey(event.unit)
        guard let exposure = event.exposure else {
            // Keys first: iterating `phases` while changing it would copy every phase.
            let touched = phases.compactMap { $0.value.hasServed(unit) ? $0.key : nil }
            for key in touched { phases[key]!.apply(event.kind, unit: unit) }
            return
        }
        let key = Self.phaseKey(experiment: exposure.experiment, salt: exposure.salt)
        if phases[key] == nil {
            guard case .served = event.kind else { return }
            phases[key] = Phase(since: event.at)
        }
        phases[key]!.apply(event.kind, unit: unit)
    }
}
