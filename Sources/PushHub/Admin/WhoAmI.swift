extension AdminToken {
    /// `GET /v1/whoami`: the token's name, its scopes and every scope it allows (what the console
    /// enables; the hub checks each call anyway). Never the secret.
    var whoAmI: JSONValue {
        .object([
            "name": .string(name),
            "scopes": .array(scopes.sorted().map { .string($0.rawValue) }),
            "allows": .array(AdminScope.allCases.filter(allows).map { .string($0.rawValue) }),
        ])
    }
}

extension TokenRoutes {
    /// `GET /v1/whoami`: the presenting token (`AdminToken.whoAmI`).
    func whoAmI() {
        guard let token = call.token else { preconditionFailure("/v1/whoami is not an open route: it has a token") }
        call.reply.json(200, token.whoAmI)
    }
}
