/// `/v1/components…` (DESIGN §16): register, read, list and delete components, with how many
/// connected clients (on every hub) can render each version.
///
/// Invariant: a registration that the current version or a rolling release's candidate of some
/// screen would violate is refused naming them, unless `?force=true`, which registers it and
/// names them in the answer — a tree already live is never silently out of its schema.
struct ComponentRoutes: AdminHandlers {
    let call: AdminCall

    init(_ call: AdminCall) { self.call = call }

    /// The component the path names (`/v1/components/{name}`).
    private var name: String { call.variable }

    /// `GET /v1/components`: every component, its versions, and the connected clients that can
    /// render each.
    func list() {
        call.gather(.clientBuilds) { [call, reply] answers in
            let builds = answers.clientBuilds
            let registry = call.state.view.components
            let resolved = Self.resolve(builds, in: registry)
            let components = registry.components.keys.sorted().map { name -> JSONValue in
                let registered = registry.components[name]!
                let versions = registered.component.sortedVersions.map { version -> JSONValue in
                    .object([
                        "version": .number(Double(version)),
                        "clients": .number(Double(Self.clients(rendering: name, version, of: resolved))),
                    ])
                }
                return .object([
                    "name": .string(name), "versions": .array(versions),
                    "updated_at": .number(Double(registered.updatedAt)),
                ])
            }
            reply.json(
                200,
                .object([
                    "components": .array(components), "clients": .number(Double(builds.values.reduce(0, &+))),
                ]))
        }
    }

    /// `GET /v1/components/{name}`: its schemas, and the clients that can render each version.
    func get() throws(AdminError) {
        guard call.state.view.components.components[name] != nil else {
            throw AdminError.notFound("no component named \(name)")
        }
        call.gather(.clientBuilds) { [call, reply, name] answers in
            let registry = call.state.view.components
            guard let registered = registry.components[name] else {
                reply.error(AdminError.notFound("no component named \(name)"))
                return
            }
            let resolved = Self.resolve(answers.clientBuilds, in: registry)
            var versions = JSONObject()
            for version in registered.component.sortedVersions {
                versions[String(version)] = .object([
                    "schema": registered.component.versions[version]!.json,
                    "clients": .number(Double(Self.clients(rendering: name, version, of: resolved))),
                ])
            }
            reply.json(
                200,
                .object([
                    "name": .string(name), "versions": .object(versions),
                    "updated_at": .number(Double(registered.updatedAt)),
                ]))
        }
    }

    /// `PUT /v1/components/{name}[?force=true]` `{"versions":{"1":{"schema":{…}},…}}`.
    func put() throws(AdminError) {
        guard !call.body.isEmpty else {
            throw AdminError(400, "empty_body", "send {\"versions\":{\"1\":{\"schema\":{…}}}}")
        }
        let body = try AdminBody.json(call.body)
        let component = try AdminError.mapping { () throws(InputError) in try Component(name: name, body: body) }
        guard let force = call.head.queryFlag("force") else {
            throw AdminError(400, "bad_query", "?force= is true or false, not \"\(call.query("force") ?? "")\"")
        }
        let violations = Self.screensViolating(component, in: call.state)
        if !violations.isEmpty && !force {
            var error = AdminError(
                409, "screens_violate",
                "\(violations.count) screen(s) would violate \(name): fix them first, or register with ?force=true")
            error.details["screens"] = .array(violations)
            throw error
        }
        call.commit([.componentPut(component, at: WallClock.nowMilliseconds())], gathering: true) {
            [plane, name] answers in
            let registered = plane.committed.view.components.components[name]
            var members = component.json.objectValue ?? JSONObject()
            members["updated_at"] = .number(Double(registered?.updatedAt ?? 0))
            members["violations"] = .array(violations)
            members["sent"] = .number(Double(answers.totalCount))
            return .object(members)
        }
    }

    /// `DELETE /v1/components/{name}`: its nodes pass unjudged from now on.
    func delete() throws(AdminError) {
        guard call.state.view.components.components[name] != nil else {
            throw AdminError.notFound("no component named \(name)")
        }
        call.commit([.componentDeleted(name)], gathering: true) { [name] answers in
            .object(["name": .string(name), "deleted": .bool(true), "sent": .number(Double(answers.totalCount))])
        }
    }

    // MARK: - Shared

    /// What each of `builds` renders under `registry`, resolved once per build, with its clients.
    static func resolve(_ builds: [ClientBuild: Int], in registry: ComponentRegistry) -> [(Capabilities, Int)] {
        builds.map { build, count in
            (
                registry.capabilities(platform: build.platform, appVersion: build.appVersion, declared: build.declared),
                count
            )
        }
    }

    /// The clients of `builds` that can render `version` of component `name`.
    static func clients(rendering name: String, _ version: Int, of builds: [(Capabilities, Int)]) -> Int {
        let need = ComponentNeed(component: name, version: version)
        var total = 0
        for (capabilities, count) in builds where capabilities.judge(need) != .cannotRender { total &+= count }
        return total
    }

    /// The screens whose current version, rolling candidate, or a running experiment's variant
    /// of it violates `component`, with their errors: `[{"screen","version","errors":[…]}]` (and
    /// `"experiment"`, `"variant"` for a variant's tree), by screen name.
    static func screensViolating(_ component: Component, in state: HubState) -> [JSONValue] {
        let view = state.view
        let components = [component.name: component]
        var found: [JSONValue] = []
        func check(_ tree: JSONValue, _ screen: String, _ version: Int, _ context: JSONObject = [:]) {
            let errors = TreeValidation.violations(
                in: tree, components: components, strict: false, limit: ComponentCheck.maxReportedErrors)
            guard !errors.isEmpty else { return }
            var members: JSONObject = [
                "screen": .string(screen), "version": .number(Double(version)),
                "errors": .array(errors.map { $0.json }),
            ]
            for (key, value) in context { members[key] = value }
            found.append(.object(members))
        }
        for name in view.screens.keys.sorted() {
            guard let current = view.current(name) else { continue }
            check(current.tree, name, current.version)
            if let candidate = view.releases[name]?.candidate { check(candidate.tree, name, candidate.version) }
            for experiment in view.experiments.touching[name] ?? [] {
                for (variant, patch) in (experiment.screens[name] ?? [:]).sorted(by: { $0.key < $1.key }) {
                    check(
                        VariantPatch.apply(patch, to: current.tree), name, current.version,
                        ["experiment": .string(experiment.key), "variant": .string(variant)])
                }
            }
        }
        return found
    }
}
