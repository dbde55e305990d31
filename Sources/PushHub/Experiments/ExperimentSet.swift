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

/// What the experiments make of one client on one screen: the variant it is in of each running
/// experiment touching the screen, with the variant's merge patch there (nil for a variant that
/// leaves the screen as it is, such as a control group: an exposure too, and part of the
/// rendition, so that the app learns its variants), and the exposures they make.
public struct VariantView: Sendable {
    public var patches: [VariantPatch] = []
    public var exposures: [(experiment: String, salt: String, variant: String)] = []
}

/// One variant of one experiment as it shapes one screen, named so that equal names mean equal
/// patches.
///
/// Invariant: `label` is "experiment@changedAt=variant"; equality and hashing use it alone.
public struct VariantPatch: Hashable, Sendable {
    public let label: String
    public let experiment: String
    public let variant: String
    /// The variant patch (docs/assignment.md "Variant patches"); nil: the screen is left as it is.
    public let patch: JSONValue?

    public init(experiment: String, changedAt: Int, variant: String, patch: JSONValue?) {
        label = "\(experiment)@\(changedAt)=\(variant)"
        self.experiment = experiment
        self.variant = variant
        self.patch = patch
    }

    /// From another hub (`ClusterWire`), label and all.
    init(label: String, experiment: String, variant: String, patch: JSONValue?) {
        self.label = label
        self.experiment = experiment
        self.variant = variant
        self.patch = patch
    }

    /// `tree` as this variant makes it.
    func apply(to tree: JSONValue) -> JSONValue { patch.map { Self.apply($0, to: tree) } ?? tree }

    /// The variant patch language (docs/assignment.md "Variant patches").
    static func apply(_ patch: JSONValue, to tree: JSONValue) -> JSONValue { KeyedMergePatch.apply(patch, to: tree) }

    /// Where `patch` names what `tree` lacks without marking it an addition.
    static func problems(in patch: JSONValue, against tree: JSONValue) -> [KeyedMergePatch.Problem] {
        KeyedMergePatch.problems(in: patch, against: tree)
    }

    public static func == (a: VariantPatch, b: VariantPatch) -> Bool { a.label == b.label }
    public func hash(into hasher: inout Hasher) { hasher.combine(label) }
}
