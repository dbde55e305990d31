extension HubView {
    /// The variants a unit is in among `experiments` (the running ones touching `screen`), and the
    /// merge patches they apply there, in the experiments' order. `assign` gives the unit's
    /// variant in one experiment (nil: not in it) — a session caches it, the admin API asks
    /// afresh — so both render a client's tree the same way.
    func variants(
        on screen: String, experiments: [Experiment], assign: (Experiment, _ label: String) -> String?
    ) -> VariantView {
        var variants = VariantView()
        for experiment in experiments {
            let label = "\(experiment.key)@\(self.experiments.changedAt[experiment.key] ?? 0)"
            guard let variant = assign(experiment, label) else { continue }
            variants.exposures.append((experiment.key, variant))
            if let patch = experiment.screens[screen]?[variant] {
                variants.patches.append(VariantPatch(label: "\(label)=\(variant)", patch: patch))
            }
        }
        return variants
    }
}
