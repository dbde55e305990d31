import Foundation

/// Where hubctl finds the admin token, first found wins: `--token`, `HUBCTL_TOKEN`, the
/// `admin.token` of `--data DIR` (or `HUBCTL_DATA`), the file `HUBCTL_TOKEN_FILE`, then
/// `./data/admin.token` (beside `make run`) and `/var/lib/pushhub/admin.token` (the deployed
/// unit's data dir) when readable.
enum AdminTokenSource {
    static let deployedDataDirectory = "/var/lib/pushhub"

    /// The token, or a usage error when a place that was named explicitly cannot be read.
    static func resolve(flag: String?, dataDirectory: String?, environment: [String: String]) -> Result<
        String?, UsageError
    > {
        if let flag { return .success(flag) }
        if let value = environment["HUBCTL_TOKEN"] { return .success(value) }
        if let directory = dataDirectory ?? environment["HUBCTL_DATA"] {
            return read(directory + "/admin.token").map { $0 }
        }
        if let file = environment["HUBCTL_TOKEN_FILE"] { return read(file).map { $0 } }
        for implicit in ["data/admin.token", deployedDataDirectory + "/admin.token"] {
            if case .success(let token) = read(implicit) { return .success(token) }
        }
        return .success(nil)
    }

    private static func read(_ file: String) -> Result<String, UsageError> {
        switch InputFile.read(file) {
        case .success(let bytes):
            let token = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return token.isEmpty ? .failure(UsageError("\(file) is empty")) : .success(token)
        case .failure(let error):
            return .failure(UsageError("the admin token: \(error.message)"))
        }
    }
}
