import Glibc

/// `--config FILE` (DESIGN §10, issue 11): a JSON object whose keys are the hub's flags with `_`
/// for `-` and without the dashes (`--keep-versions` is `keep_versions`); values are strings, numbers or booleans (`true` is `on`). It sits below the
/// environment and the flags: flags > env > file.
///
/// Invariant: `values` holds only known flags; an unknown key is refused naming it, the file and
/// the nearest known key — a typo in a config file must not be silently ignored.
enum ConfigFile {
    /// Flag → value text, as if given on the command line.
    static func values(of path: String, knownFlags: [String]) throws(HubOptions.UsageError) -> [String: String] {
        // A settings file is small and regular: a device or a huge file is a mistake, not config.
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw HubOptions.UsageError(description: "the config file \(path) is missing or not a regular file")
        }
        // try?: a read error is reported as this sentence, which names the file and the limit.
        guard status.st_size <= 1 << 20, let data = try? FileBytes.read(path) else {
            throw HubOptions.UsageError(description: "cannot read the config file \(path) (at most 1 MiB)")
        }
        let json: JSONValue
        do {
            json = try JSONReader.parse(Array(data))
        } catch {
            throw HubOptions.UsageError(description: "\(path) is not JSON: \(error)")
        }
        guard case .object(let members) = json else {
            throw HubOptions.UsageError(description: "\(path) must hold a JSON object of settings")
        }
        let keys = knownFlags.map { key(of: $0) }
        var values: [String: String] = [:]
        for (key, value) in members {
            let flag = "--" + key.replacing("_", with: "-")
            guard knownFlags.contains(flag), !key.contains("-") else {
                let hint = NearestName.suggest(key, among: keys).map { " (did you mean \"\($0)\"?)" } ?? ""
                throw HubOptions.UsageError(description: "\(path): unknown key \"\(key)\"\(hint)")
            }
            switch value {
            case .string(let text): values[flag] = text
            case .array(let items) where items.allSatisfy({ $0.stringValue != nil }):
                values[flag] = items.compactMap(\.stringValue).joined(separator: ",")  // allowed_origins
            case .bool(let on): values[flag] = on ? "on" : "off"
            case .number(let number) where number == number.rounded() && abs(number) < 1e15:
                values[flag] = String(Int(number))
            default:
                throw HubOptions.UsageError(
                    description: "\(path): \"\(key)\" wants a string, an integer or true/false, not \(JSONWriter.string(value))")
            }
        }
        return values
    }

    /// `--max-connections` → `max_connections`.
    static func key(of flag: String) -> String { String(flag.dropFirst(2)).replacing("-", with: "_") }
}
