import PushHub

#if canImport(Glibc)
    import Glibc
#endif

/// The hub's configuration reader: `pushhub`'s command-line arguments, `PUSHHUB_*` environment
/// variables and the JSON `--config` file (`HubOptions`, `ConfigFile`).
///
/// Input: NUL-separated strings; one of the form `PUSHHUB_NAME=value` is an environment
/// variable, one starting with `{` the config file's text (written to a file of this process's
/// own, and `--config` naming it added to the arguments), any other an argument.
///
/// Properties: `parse` returns or throws a `UsageError` (never traps), and a config it returns
/// keeps `HubConfig`'s invariants — positive durations, loops in 0...256, versions kept in
/// 1...1000, an echo path starting with `/`, watermarks in order (`--dev` with `--allow-anonymous off`
/// is a valid choice: tokens required, the rest of dev mode kept) — and parsing it twice gives
/// the same answer.
enum HubOptionsFuzz {
    static func run(_ data: UnsafeRawBufferPointer) throws(PropertyViolation) {
        var arguments: [String] = []
        var environment: [String: String] = [:]
        var hasConfigFile = false
        defer { if hasConfigFile { unlink(configPath) } }
        for part in FuzzInput.split(data) {
            let text = String(decoding: part, as: UTF8.self)
            if text.hasPrefix("PUSHHUB_"), let equals = text.firstIndex(of: "=") {
                environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
            } else if part.first == UInt8(ascii: "{") {
                writeConfigFile(part)
                arguments += ["--config", configPath]
                hasConfigFile = true
            } else {
                arguments.append(text)
            }
        }
        guard let (config, level, help, _, _) = try? HubOptions.parse(arguments, environment: environment) else { return }
        let durations = [
            config.handshakeTimeout, config.helloTimeout, config.pingInterval, config.idleTimeout, config.closeTimeout,
            config.drainTimeout, config.syncTTL,
        ]
        try check(durations.allSatisfy { $0 > .zero }, "a duration is not positive: \(durations)")
        try check((0...256).contains(config.loops), "loops \(config.loops)")
        try check((1...1000).contains(config.keepVersions), "keep-versions \(config.keepVersions)")
        try check(config.echoPath?.hasPrefix("/") ?? true, "echo path \(String(describing: config.echoPath))")
        try check(
            config.outboundLowWatermark < config.outboundHighWatermark
                && config.outboundHighWatermark < config.outboundHardLimit, "watermarks out of order")
        let again = try? HubOptions.parse(arguments, environment: environment)
        try check(
            again.map { "\($0.config)|\($0.logLevel)|\($0.help)" } == "\(config)|\(level)|\(help)",
            "parsed twice, \(arguments) \(environment) gave two answers")
    }

    /// The config file this process writes its inputs to (one per process: fuzzers run in parallel).
    static let configPath = "/tmp/pushhub-fuzz-config-\(getpid()).json"

    static func writeConfigFile(_ bytes: [UInt8]) {
        let fd = open(configPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        precondition(fd >= 0, "the fuzzer can write its config file \(configPath)")
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        precondition(written == bytes.count, "the whole config file is written")
    }
}
