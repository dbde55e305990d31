/// `/v1/tokens` (DESIGN §14): named admin tokens with scopes, managed with an `admin` token.
/// A token's secret is returned once, by the `POST` that creates it; the hub keeps its SHA-256.
///
/// Invariant: names are unique (`409` for a taken one); the root token (`admin.token`) is not
/// one of these and cannot be revoked here.
struct TokenRoutes: AdminHandlers {
    let call: AdminCall

    init(_ call: AdminCall) { self.call = call }


    func list() {
        let tokens = call.state.adminTokens.values.sorted { $0.name < $1.name }.map { token -> JSONValue in
            .object([
                "name": .string(token.name), "scopes": .array(token.scopes.sorted().map { .string($0.rawValue) }),
                "created_at": .number(Double(token.createdAt)),
            ])
        }
        call.reply.json(200, .object(["tokens": .array(tokens)]))
    }

    /// `POST /v1/tokens {"name": …, "scopes": […]}`: the new token with its secret, shown this once.
    func create() throws(AdminError) {
        let request = try AdminBody.object(
            call.body, known: ["name", "scopes"], shape: "{\"name\": …, \"scopes\": [\"publish\", …]}")
        let name = request["name"]?.stringValue ?? ""
        if let problem = Identifier.validationError(name, kind: "a token name") {
            throw AdminError(422, "invalid_token_name", problem)
        }
        guard name != "root" else { throw AdminError(422, "invalid_token_name", "\"root\" is the data dir's token") }
        let known = AdminScope.allCases.map(\.rawValue)
        guard let list = request["scopes"]?.arrayValue, !list.isEmpty else {
            throw AdminError(
                422, "invalid_scopes", "\"scopes\" must list one or more of \(known.joined(separator: ", "))")
        }
        var scopes = Set<AdminScope>()
        for entry in list {
            guard let text = entry.stringValue, let scope = AdminScope(rawValue: text) else {
                let typed = entry.stringValue ?? JSONWriter.string(entry)
                let hint = NearestName.suggest(typed, among: known).map { " (did you mean \"\($0)\"?)" } ?? ""
                throw AdminError(
                    422, "invalid_scopes", "unknown scope \"\(typed)\"\(hint); scopes: \(known.joined(separator: ", "))"
                )
            }
            scopes.insert(scope)
        }
        guard call.state.adminTokens[name] == nil else {
            throw AdminError(409, "token_exists", "a token named \(name) exists; revoke it first")
        }
        let secret = Self.newSecret()
        let token = AdminToken(
            name: name, scopes: scopes, digest: AdminToken.digest(of: secret), createdAt: WallClock.nowMilliseconds())
        call.commit([.adminTokenCreated(token)]) { _ in
            .object([
                "name": .string(name), "scopes": .array(scopes.sorted().map { .string($0.rawValue) }),
                "token": .string(secret),
            ])
        }
    }

    /// `DELETE /v1/tokens/{name}`: refused (401) from then on.
    func revoke() throws(AdminError) {
        let name = call.variable
        guard call.state.adminTokens[name] != nil else { throw AdminError.notFound("no admin token named \(name)") }
        call.commit([.adminTokenRevoked(name)]) { _ in
            .object(["name": .string(name), "revoked": .bool(true)])
        }
    }

    /// 32 random bytes as hex, from the system's CSPRNG.
    private static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
    }
}
