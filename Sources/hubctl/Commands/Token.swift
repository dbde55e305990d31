import Foundation
import PushHub

/// `hubctl token --user U [--cohort C]... [--ttl 1h]`: mints a client JWT with the hub's secret;
/// `hubctl token admin create NAME --scope S… | list | revoke NAME`: named admin tokens.
enum Token: Command {
    static let name = "token"
    static let abstract = "Mint a client token (HS256 JWT) for testing; create, list and revoke admin tokens."
    static let usage = """
        hubctl token --user U [--cohort C]... [--ttl 1h] [--secret-file F]
        hubctl token admin create NAME --scope S [--scope S2 …] | list | revoke NAME
        """
    static let options: [(String, String)] = [
        ("--user U", "the sub claim"), ("--cohort C", "add C to the cohorts claim (repeatable)"),
        ("--ttl D", "lifetime (default 1h)"),
        ("--secret-file F", "the HS256 secret (env HUBCTL_JWT_SECRET_FILE; default ./data/jwt.secret)"),
        ("--scope S", "admin create: admin, publish, sync, experiment or read (repeatable)"),
    ]
    static let subcommands: [(String, String)] = [
        ("admin create", "Create a named admin token with scopes; prints its secret once."),
        ("admin list", "List the named admin tokens and their scopes."),
        ("admin revoke", "Revoke a named admin token."),
    ]

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        if arguments.words.count >= 2 && arguments.words[1] == "admin" {
            return admin(Array(arguments.words.dropFirst(2)), arguments, client: client, output: output)
        }
        guard let user = arguments.options["--user"]?.last else {
            FileHandle.standardError.write(Data("Error: Missing value for '--user U'.\nUsage: \(usage)\n".utf8))
            return ExitCode.usage
        }
        let ttl = arguments.options["--ttl"]?.last.map { HubOptions.duration($0) } ?? .seconds(3600)
        guard let ttl else {
            FileHandle.standardError.write(Data("Error: --ttl wants a duration such as 1h.\nUsage: \(usage)\n".utf8))
            return ExitCode.usage
        }
        let path =
            arguments.options["--secret-file"]?.last ?? ProcessInfo.processInfo.environment["HUBCTL_JWT_SECRET_FILE"]
            ?? "data/jwt.secret"
        guard
            let secret = try? String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(
                in: .whitespacesAndNewlines), !secret.isEmpty
        else {
            output.error("cannot read the secret from \(path); pass --secret-file")
            return ExitCode.usage
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
