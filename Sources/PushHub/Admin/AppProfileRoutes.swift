/// `/v1/apps…` (DESIGN §16): what the builds of a platform from an app version on can render,
/// registered by the app's CI at release time, for clients that declare nothing themselves.
struct AppProfileRoutes: AdminHandlers {
    let call: AdminCall

    init(_ call: AdminCall) { self.call = call }

    private var platform: String { call.variables[0] }

    /// The version in the path, normalised ("5.0" is 5.0.0); the path variable's check made sure
    /// it parses.
    private var appVersion: SemanticVersion { SemanticVersion(call.variables[1])! }

    /// `GET /v1/apps`: every profile, by platform then version.
    func list() {
        let registry = call.state.view.components
        let profiles = registry.profiles.keys.sorted().flatMap { registry.profiles[$0]!.map(\.json) }
        reply.json(200, .object(["profiles": .array(profiles)]))
    }

    /// `GET /v1/apps/{platform}/{version}/components`: the profile that applies to that build —
    /// the newest of the platform at or below the version.
    func get() throws(AdminError) {
        guard let profile = call.state.view.components.profile(platform, for: appVersion) else {
            throw AdminError.notFound(
                "no profile of \(platform) at or below \(appVersion): its clients render every component")
        }
        reply.json(
            200,
            .object([
                "platform": .string(platform), "app_version": .string(appVersion.description),
                "profile_version": .string(profile.appVersion.description), "components": profile.components.json,
                "updated_at": .number(Double(profile.updatedAt)),
            ]))
    }

    /// `PUT /v1/apps/{platform}/{version}/components` `{"components":{"Carousel":1,…}}`.
    func put() throws(AdminError) {
        let body = try AdminBody.json(call.body)
        let components = try AdminError.mapping { () throws(InputError) in try AppProfile.components(body: body) }
        let profile = AppProfile(
            platform: platform, appVersion: appVersion, components: components, updatedAt: WallClock.nowMilliseconds())
        call.commit([.appProfilePut(profile)], gathering: true) { answers in
            var members = profile.json.objectValue ?? JSONObject()
            members["sent"] = .number(Double(answers.totalCount))
            return .object(members)
        }
    }

    /// `DELETE /v1/apps/{platform}/{version}/components`: the profile registered at exactly that version.
    func delete() throws(AdminError) {
        guard call.state.view.components.profile(platform, exactly: appVersion) != nil else {
            throw AdminError.notFound("no profile of \(platform) registered at \(appVersion)")
        }
        call.commit([.appProfileDeleted(platform: platform, appVersion: appVersion)], gathering: true) {
            [platform, appVersion] answers in
            .object([
                "platform": .string(platform), "app_version": .string(appVersion.description), "deleted": .bool(true),
                "sent": .number(Double(answers.totalCount)),
            ])
        }
    }
}
