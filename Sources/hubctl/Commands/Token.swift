import Foundation
import PushHub

/// `hubctl token --user U [--cohort C]... [--ttl 1h]`: mints a client JWT with the hub's secret;
/// `hubctl token admin create NAME --scope S… | list | revoke NAME`: named admin tokens.
enum Token: Command {
    static let name = "token"
    static let abstract = "Mint a client token (HS256 JWT) for testing; create, list and revoke admin tokens."
    static let usage = """
        hubctl token --user U [--cohort C]... [--ttl 1h] [--secret-file F | --data DIR] [--json]
        hubctl token admin create NAME --scope S [--scope S2 …] [--json] | list | revoke NAME
        """
    static let options: [(String, String)] = [
        ("--user U", "the sub claim"), ("--cohort C", "add C to the cohorts claim (repeatable)"),
        ("--ttl D", "lifetime: 90s, 1h, 1d, 1h30m … (default 1h)"),
        (
            "--secret-file F",
            "the HS256 secret (env HUBCTL_JWT_SECRET_FILE; else DIR/jwt.secret of --data DIR or HUBCTL_DATA; "
                + "default ./data/jwt.secret, then /var/lib/pushhub/jwt.secret)"
        ),
        ("--scope S", "admin create: admin, publish, sync, experiment or read (repeatable)"),
    ]
    static let subcommands: [(String, String)] = [
        (
            "admin create",
            "Create a named admin token with scopes; prints its secret once (--json: {name, scopes, token}, "
                + "token being the secret)."
        ),
        ("admin list", "List the named admin tokens and their scopes."),
        ("admin revoke", "Revoke a named admin token."),
    ]

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        if arguments.words.count >= 2 && arguments.words[1] == "admin" {
            return admin(Array(arguments.words.dropFirst(2)), arguments, client: client, output: output)
        }
        guard let user = arguments.options["--user"]?.last else { return usageError("Missing value for '--user U'.") }
        let ttl = arguments.options["--ttl"]?.last.map { DurationText.parse($0) } ?? .seconds(3600)
        guard let ttl else { return usageError("--ttl wants a duration such as 90s, 1h, 1d or 1h30m.") }
        let secret: String
        switch jwtSecret(arguments) {
        case .success(let found): secret = found
        case .failure(let error): return usageError(error.message)
        }
        let now = Int(Date().timeIntervalSince1970)
        var claims: JSONObject = [
            "sub": .string(user), "iat": .number(Double(now)),
            "exp": .number(Double(now + Int(ttl.components.seconds))),
        ]
        if let cohorts = arguments.options["--cohort"] { claims["cohorts"] = .array(cohorts.map(JSONValue.string)) }
        let token = JWTVerifier.sign(claims, secret: Array(secret.utf8))
        output.print(output.json ? JSONWriter.string(.object(["token": .string(token), "sub": .string(user)])) : token)
        return ExitCode.success
    }

    /// The JWT secret for minting client tokens (`HubSecret.jwtSecret`; `--secret-file` is this
    /// command's and `watch`'s).
    static func jwtSecret(_ arguments: Arguments) -> Result<String, UsageError> {
        HubSecret.jwtSecret.require(
            flag: arguments.options["--secret-file"]?.last, dataDirectory: arguments.dataDirectory,
            environment: ProcessInfo.processInfo.environment)
    }

    private static func admin(_ words: [String], _ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        switch (words.first, words.count) {
        case ("create", 2):
            guard let scopes = arguments.options["--scope"] else {
                return usageError("'token admin create' needs --scope (admin, publish, sync, experiment, read).")
            }
            let body = JSONWriter.write(
                .object(["name": .string(words[1]), "scopes": .array(scopes.map(JSONValue.string))]))
            return request(client, output, "POST", "/v1/tokens", body: body) { answer in
                output.table([
                    ("token", answer["name"]?.stringValue ?? ""),
                    ("scopes", (answer["scopes"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: " ")),
                    ("secret", answer["token"]?.stringValue ?? ""),
                ])
                output.print("(the secret is shown once; the hub keeps only its hash)")
            }
        case ("list", 1):
            return request(client, output, "GET", "/v1/tokens") { answer in
                let rows = (answer["tokens"]?.arrayValue ?? []).map { token in
                    [
                        token["name"]?.stringValue ?? "",
                        (token["scopes"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: " "),
                    ]
                }
                if rows.isEmpty { output.print("no named admin tokens (the root token is admin.token)") }
                output.columns(rows)
            }
        case ("revoke", 2):
            return request(client, output, "DELETE", "/v1/tokens/\(Screen.encode(words[1]))") { _ in
                output.print("revoked \(words[1])")
            }
        default:
            return usageError("'token admin' takes create NAME --scope S, list, or revoke NAME.")
        }
    }
}
