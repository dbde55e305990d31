/// DESIGN §16 at the admin API: a tree about to reach clients — a publish, a rollback, a release's
/// candidate, and the tree each variant of an experiment makes of its screen — matches the schemas
/// of its registered components (and, with `--strict-components`, names only registered ones);
/// else 422 `invalid_tree` listing every error with its JSON Pointer, and for a variant's tree
/// the experiment and variant it belongs to.
struct ComponentCheck {
    let call: AdminCall

    /// The most errors a 422 lists (a 10,000-node tree can have more; the answer says so).
    static let maxReportedErrors = 1000

    /// `tree` as `screen`'s next version: itself, and what each running experiment's variants
    /// make of it.
    func check(_ tree: JSONValue, screen: String) throws(AdminError) {
        let running = call.state.view.experiments.touching[screen] ?? []
        try refuse(errors(tree, itself: true, screen: screen, experiments: running))
    }

    /// The trees `experiment`'s variants make of each of its screens' current version (the
    /// current trees themselves were checked when published).
    func check(variantsOf experiment: Experiment) throws(AdminError) {
        var found: [JSONValue] = []
        for screen in experiment.screens.keys.sorted() {
            guard let base = call.state.view.current(screen) else { continue }
            found += errors(base.tree, itself: false, screen: screen, experiments: [experiment])
        }
        try refuse(found)
    }

    /// The errors of `tree` (when `itself`) and of each tree the variants of `experiments` make
    /// of it on `screen`, at most `maxReportedErrors + 1` (one more tells that the list was cut).
    private func errors(_ tree: JSONValue, itself: Bool, screen: String, experiments: [Experiment]) -> [JSONValue] {
        let registry = call.state.view.components
        let strict = call.plane.config.strictComponents
        guard strict || !registry.components.isEmpty else { return [] }
        let components = registry.componentsByName
        var found: [JSONValue] = []
        func add(_ tree: JSONValue, _ context: JSONObject) {
            let room = Self.maxReportedErrors + 1 - found.count
            guard room > 0 else { return }
            for violation in TreeValidation.violations(in: tree, components: components, strict: strict, limit: room) {
                var members = violation.json.objectValue ?? JSONObject()
                for (key, value) in context { members[key] = value }
                found.append(.object(members))
            }
        }
        if itself { add(tree, [:]) }
        for experiment in experiments {
            for (variant, patch) in (experiment.screens[screen] ?? [:]).sorted(by: { $0.key < $1.key }) {
                add(
                    VariantPatch.apply(patch, to: tree),
                    ["screen": .string(screen), "experiment": .string(experiment.key), "variant": .string(variant)])
            }
        }
        return found
    }

    private func refuse(_ errors: [JSONValue]) throws(AdminError) {
        guard let first = errors.first else { return }
        let listed = Array(errors.prefix(Self.maxReportedErrors))
        let pointer = first["pointer"]?.stringValue ?? ""
        let place =
            (first["variant"]?.stringValue).map {
                "variant \($0) of \(first["experiment"]?.stringValue ?? ""), on \(first["screen"]?.stringValue ?? ""), at "
            } ?? ""
        var error = AdminError(
            422, "invalid_tree",
            "\(errors.count > listed.count ? "more than \(listed.count)" : String(listed.count)) error(s) against the "
                + "registered components; the first, \(place)\(pointer.isEmpty ? "the root" : pointer): "
                + (first["message"]?.stringValue ?? ""))
        error.details["errors"] = .array(listed)
        if errors.count > listed.count { error.details["truncated"] = .bool(true) }
        throw error
    }
}
