extension HubView {
    /// What `client` sees `screen` as when no session remembers its assignments — an operator's
    /// read, an HTTP fetch: its variants of the running experiments, assigned afresh (a client
    /// without a unit has none), over what it renders. `assigned` hears each assignment made.
    func renderTarget(
        for client: ClientAttributes, on screen: String, capabilities: Capabilities,
        assigned: (Experiment, Assignment.Outcome, _ unit: String) -> Void = { _, _, _ in }
    ) -> RenderTarget {
        var target = RenderTarget(capabilities: capabilities)
        let unit = client.user ?? client.device
        guard !unit.isEmpty, let experiments = experiments.touching[screen] else { return target }
        target.variantPatches =
            variants(on: screen, experiments: experiments) { experiment, _ in
                let outcome = assignment(experiment, unit: unit, client: client)
                assigned(experiment, outcome, unit)
                return outcome.variant
            }.patches
        return target
    }

    /// An up-to-date client without variants that renders every registered component.
    var latestTarget: RenderTarget { RenderTarget(capabilities: components.latest) }
}
