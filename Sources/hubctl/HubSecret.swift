import Foundation

/// A secret a hub keeps in its data dir — the admin token (`admin.token`) or the JWT secret
/// (`jwt.secret`) — and where hubctl finds it. First found wins:
///
/// | | admin token | JWT secret (`token`, `watch --user`) |
/// |---|---|---|
/// | 1 | `--token` | `--secret-file FILE` |
/// | 2 | `HUBCTL_TOKEN` | `HUBCTL_JWT_SECRET_FILE` |
/// | 3 | `DIR/admin.token` of `--data DIR` or `HUBCTL_DATA` | `DIR/jwt.secret` of `--data DIR` or `HUBCTL_DATA` |
/// | 4 | the file `HUBCTL_TOKEN_FILE` | |
/// | 5 | `./data/admin.token`, `/var/lib/pushhub/admin.token` | `./data/jwt.secret`, `/var/lib/pushhub/jwt.secret` |
///
/// Invariant: the first place named (1–4) decides, and one that cannot be read is a usage error
/// saying why; the implicit places (5, beside `make run` and the deployed unit's data dir) are
/// used only when readable.
enum HubSecret {
    case adminToken, jwtSecret

    static let deployedDataDirectory = "/var/lib/pushhub"

    /// Where to look: a value given as is, or a file holding it.
    enum Place {
        case value(String)
        case file(String)
    }

    var fileName: String {
        switch self {
        case .adminToken: "admin.token"
        case .jwtSecret: "jwt.secret"
        }
    }

    /// The secret, nil when no place was named and no implicit file is readable, or a usage error.
    /// - Parameter flag: `--token` (a value) or `--secret-file` (a file).
    func resolve(flag: String?, dataDirectory: String?, environment: [String: String]) -> Result<String?, UsageError> {
        let directory = (dataDirectory ?? environment["HUBCTL_DATA"]).map { Place.file($0 + "/" + fileName) }
        let named: [Place?]
        switch self {
        case .adminToken:
            named = [
                flag.map(Place.value), environment["HUBCTL_TOKEN"].map(Place.value), directory,
                environment["HUBCTL_TOKEN_FILE"].map(Place.file),
            ]
        case .jwtSecret:
            named = [flag.map(Place.file), environment["HUBCTL_JWT_SECRET_FILE"].map(Place.file), directory]
        }
        switch named.lazy.compactMap({ $0 }).first {
        case .value(let value)?: return .success(value)
        case .file(let file)?: return read(file).map { $0 }
        case nil: break
        }
        for implicit in ["data", Self.deployedDataDirectory].map({ $0 + "/" + fileName }) {
            if case .success(let secret) = read(implicit) { return .success(secret) }
        }
        return .success(nil)
    }

    /// As `resolve`, with finding none a usage error saying where it was looked for and how to name it.
    func require(flag: String?, dataDirectory: String?, environment: [String: String]) -> Result<String, UsageError> {
        resolve(flag: flag, dataDirectory: dataDirectory, environment: environment).flatMap { secret in
            guard let secret else {
                let looked = "./data/\(fileName) or \(Self.deployedDataDirectory)/\(fileName)"
                return .failure(UsageError("\(what) was not found in \(looked); \(howToName)"))
            }
            return .success(secret)
        }
    }

    /// How to name the secret's place, for the message when it is missing or unreadable.
    private var howToName: String {
        switch self {
        case .adminToken:
            "pass --token, set HUBCTL_TOKEN, or --data DIR (HUBCTL_DATA) for DIR/admin.token"
        case .jwtSecret:
            "pass --secret-file FILE, set HUBCTL_JWT_SECRET_FILE=FILE, or --data DIR (HUBCTL_DATA) for DIR/jwt.secret"
        }
    }

    private var what: String {
        switch self {
        case .adminToken: "the admin token"
        case .jwtSecret: "the JWT secret"
        }
    }

    private func read(_ file: String) -> Result<String, UsageError> {
        switch InputFile.read(file) {
        case .success(let bytes):
            let secret = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return secret.isEmpty ? .failure(UsageError("\(what): \(file) is empty; \(howToName)")) : .success(secret)
        case .failure(let error):
            return .failure(UsageError("\(what): \(error.message); \(howToName)"))
        }
    }
}
