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
