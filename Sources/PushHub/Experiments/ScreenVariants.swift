extension HubView {
    /// The variants a unit is in among `experiments` (the running ones touching `screen`), and the
    /// patches they apply there (nil for a variant without one), in the experiments' order. `assign` gives the unit's
    /// variant in one experiment (nil: not in it) — a session caches it, the admin API asks
    /// afresh — so both render a client's tree the same way.
    func variants(
        on screen: String, experiments: [Experiment], assign: (Experiment, _ label: String) -> String?
    ) -> VariantView {
        var variants = VariantView()
        for experiment in experiments {
            let changedAt = self.experiments.changedAt[experiment.key] ?? 0
            guard let variant = assign(experiment, "\(experiment.key)@\(changedAt)") else { continue }
            variants.exposures.append((experiment.key, experiment.salt, variant))
            variants.patches.append(
                VariantPatch(
                    experiment: experiment.key, changedAt: changedAt, variant: variant,
                    patch: experiment.screens[screen]?[variant]))
        }
        return variants
    }
}
