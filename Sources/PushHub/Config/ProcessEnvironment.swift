import Glibc

/// The process's environment variables (what `ProcessInfo.processInfo.environment` gives,
/// without linking Foundation into the hub). Read once at start and at each SIGHUP; the hub never
/// sets variables, so `environ` does not change under the read.
public enum ProcessEnvironment {
    public static func current() -> [String: String] {
        var variables: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                // The first definition wins, as getenv(3) finds it.
                let name = String(text[..<equals])
                if variables[name] == nil { variables[name] = String(text[text.index(after: equals)...]) }
            }
            entry += 1
        }
        return variables
    }
}
