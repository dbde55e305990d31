import Glibc

/// What the process was started with: its arguments and environment variables, for `pushhub` and
/// `hubctl`, without Foundation (which would be linked into the hub for `ProcessInfo`).
public enum ProcessEnvironment {
    /// The arguments after the program's name. Swift reads them from /proc/self/cmdline on
    /// Linux: without /proc (a bare chroot, an image run without it) even argv[0] is missing and
    /// the flags would be silently ignored, so the process says so and exits 2 (a usage error).
    public static func arguments() -> [String] {
        guard !CommandLine.arguments.isEmpty else {
            let message = "Error: cannot read the command line: /proc/self/cmdline is missing (mount /proc)\n"
            _ = Array(message.utf8).withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            exit(2)
        }
        return Array(CommandLine.arguments.dropFirst())
    }

    /// The environment variables (what `ProcessInfo.processInfo.environment` gives). Read once at
    /// start and at each SIGHUP; the hub never sets variables, so `environ` does not change under
    /// the read.
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
