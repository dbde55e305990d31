import Foundation
import PushHub

/// `hubctl token --user U [--cohort C]... [--ttl 1h]`: mints a client JWT with the hub's secret.
enum Token: Command {
    static let name = "token"
    static let abstract = "Mint a client token (HS256 JWT) from the hub's secret, for testing."
    static let usage = "hubctl token --user U [--cohort C]... [--ttl 1h] [--secret-file F]"
    static let options: [(String, String)] = [
        ("--user U", "the sub claim"), ("--cohort C", "add C to the cohorts claim (repeatable)"),
        ("--ttl D", "lifetime (default 1h)"),
        ("--secret-file F", "the HS256 secret (env HUBCTL_JWT_SECRET_FILE; default ./data/jwt.secret)"),
    ]

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
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
}
