import Synchronization

/// Every experiment definition and the sticky assignments, durable through their `RecordLog`s;
/// `current` is the immutable set in force.
///
/// Invariants: `current.generation` increases with every change; a sticky unit's stored variant
/// is returned for as long as the experiment exists, whatever its weights or traffic become.
public final class ExperimentStore: Sendable {
    struct State {
        var current = ExperimentSet.empty
        var sticky: [String: [String: String]] = [:]  // experiment → unit → variant
    }

    private let state: Mutex<State>
    private let log: RecordLog?
    private let stickyLog: RecordLog?

    public init(dataDirectory: String?) throws {
        var definitions: [String: Experiment] = [:]
        var changedAt: [String: Int] = [:]
        var sticky: [String: [String: String]] = [:]
        var generation = 0
        if let dataDirectory {
            let log = try RecordLog(directory: dataDirectory, name: "experiments")
            func apply(_ record: JSONValue) {
                guard let key = record["key"]?.stringValue else { return }
                generation += 1
                if record["op"]?.stringValue == "delete" {
                    definitions[key] = nil
                    changedAt[key] = nil
                } else if let json = record["definition"], let experiment = try? Experiment(key: key, json: json) {
                    definitions[key] = experiment
                    changedAt[key] = generation
                }
            }
            try log.restore(
                snapshot: { json in
                    for entry in json["experiments"]?.arrayValue ?? [] {
                        apply(
                            .object([
                                "op": .string("put"), "key": entry["key"] ?? .null,
                                "definition": entry["definition"] ?? .null,
                            ]))
                    }
                }, record: apply)
            let stickyLog = try RecordLog(directory: dataDirectory, name: "sticky")
            try stickyLog.restore(
                snapshot: { json in
                    for (experiment, units) in json.objectValue ?? JSONObject() {
                        for (unit, variant) in units.objectValue ?? JSONObject() {
                            sticky[experiment, default: [:]][unit] = variant.stringValue
                        }
                    }
                },
                record: { record in
                    if let experiment = record["experiment"]?.stringValue, let unit = record["unit"]?.stringValue,
                        let variant = record["variant"]?.stringValue
                    {
                        sticky[experiment, default: [:]][unit] = variant
                    }
                })
            self.log = log
            self.stickyLog = stickyLog
        } else {
            log = nil
            stickyLog = nil
        }
        state = Mutex(
            State(
                current: ExperimentSet(generation: generation, all: definitions, changedAt: changedAt), sticky: sticky))
    }

    public var current: ExperimentSet { state.withLock { $0.current } }

    /// Stores a definition (new or changed); returns the previous set and the new one.
    public func put(_ experiment: Experiment) throws -> (old: ExperimentSet, new: ExperimentSet) {
        try change(.object(["op": .string("put"), "key": .string(experiment.key), "definition": experiment.json])) {
            all, changed, generation in
            all[experiment.key] = experiment
            changed[experiment.key] = generation
        }
    }

    public func delete(_ key: String) throws -> (old: ExperimentSet, new: ExperimentSet) {
        try change(.object(["op": .string("delete"), "key": .string(key)])) { all, changed, _ in
            all[key] = nil
            changed[key] = nil
        }
    }

    private func change(_ record: JSONValue, _ edit: (inout [String: Experiment], inout [String: Int], Int) -> Void)
        throws
        -> (old: ExperimentSet, new: ExperimentSet)
    {
        try state.withLock { state in
            let old = state.current
            var all = old.all, changed = old.changedAt
            edit(&all, &changed, old.generation + 1)
            let new = ExperimentSet(generation: old.generation + 1, all: all, changedAt: changed)
            try log?.append(record) {
                .object([
                    "experiments": .array(
                        new.all.values.sorted { $0.key < $1.key }.map {
                            .object(["key": .string($0.key), "definition": $0.json])
                        })
                ])
            }
            state.current = new
            if record["op"]?.stringValue == "delete", let key = record["key"]?.stringValue { state.sticky[key] = nil }
            return (old, new)
        }
    }

    /// The client's variant in `experiment` (nil: not in it), remembering the first assignment
    /// of sticky experiments durably.
    public func variant(
        _ experiment: Experiment, unit: String, client: ClientAttributes?, cohorts: CohortStore?, remember: Bool
    ) -> Assignment.Outcome {
        if experiment.sticky, let stored = state.withLock({ $0.sticky[experiment.key]?[unit] }),
            experiment.overrides[unit] == nil
        {
            return .variant(stored, reason: "sticky")
        }
        let outcome = Assignment.assign(experiment, unit: unit, client: client, cohorts: cohorts)
        if remember, experiment.sticky, let variant = outcome.variant, experiment.overrides[unit] == nil {
            state.withLock { state in
                guard state.sticky[experiment.key]?[unit] == nil else { return }
                state.sticky[experiment.key, default: [:]][unit] = variant
                let sticky = state.sticky
                try? stickyLog?.append(
                    .object(["experiment": .string(experiment.key), "unit": .string(unit), "variant": .string(variant)])
                ) {
                    .object(JSONObject(sticky.mapValues { .object(JSONObject($0.mapValues(JSONValue.string))) }))
                }
            }
        }
        return outcome
    }

    /// What `client` sees of `screen` under `set`: its variants' patches in key order, and its exposures.
    public func view(of screen: String, in set: ExperimentSet, client: ClientAttributes?, cohorts: CohortStore)
        -> VariantView
    {
        guard let experiments = set.touching[screen], let client else { return VariantView() }
        var view = VariantView()
        let unit = client.user ?? client.device
        for experiment in experiments {
            guard
                let variant = self.variant(experiment, unit: unit, client: client, cohorts: cohorts, remember: true)
                    .variant
            else { continue }
            view.exposures.append((experiment.key, variant))
            if let patch = experiment.screens[screen]?[variant] {
                view.patches.append(
                    VariantPatch(
                        label: "\(experiment.key)@\(set.changedAt[experiment.key] ?? 0)=\(variant)", patch: patch))
            }
        }
        return view
    }
}

@available(*, unavailable)
extension ExperimentStore.State: Sendable {}
