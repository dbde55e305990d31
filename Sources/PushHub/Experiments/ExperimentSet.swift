/// The experiments in force at one moment, immutable: a new set replaces it on every change,
/// so a rendition can name the set it came from.
///
/// Invariants: `running` is sorted by key (the order merge patches apply in, DESIGN §4);
/// `touching[screen]` lists the running experiments with a merge patch for that screen.
public final class ExperimentSet: Sendable {
    public let generation: Int
    public let all: [String: Experiment]
    /// When each experiment last changed (its patches are labelled with it).
    public let changedAt: [String: Int]
    public let running: [Experiment]
    public let touching: [String: [Experiment]]

    public init(generation: Int, all: [String: Experiment], changedAt: [String: Int]) {
        self.generation = generation
        self.all = all
        self.changedAt = changedAt
        running = all.values.filter { $0.status == .running }.sorted { $0.key < $1.key }
        var touching: [String: [Experiment]] = [:]
        for experiment in running {
            for screen in experiment.screens.keys { touching[screen, default: []].append(experiment) }
        }
        self.touching = touching
    }

    public static let empty = ExperimentSet(generation: 0, all: [:], changedAt: [:])
}

/// What the experiments make of one client on one screen: the merge patches it gets, and the
/// (experiment, variant) pairs it is exposed to (a variant without a patch, such as a control
/// group, is an exposure too).
public struct VariantView: Sendable {
    public var patches: [VariantPatch] = []
    public var exposures: [(experiment: String, variant: String)] = []
}

/// One variant's merge patch for one screen, named so that equal names mean equal patches.
///
/// Invariant: `label` is "experiment@changedAt=variant"; equality and hashing use it alone.
public struct VariantPatch: Hashable, Sendable {
    public let label: String
    public let patch: JSONValue

    public static func == (a: VariantPatch, b: VariantPatch) -> Bool { a.label == b.label }
    public func hash(into hasher: inout Hasher) { hasher.combine(label) }
}
