import CLinux
import Glibc
import PushHub

// pushhub: read flags and env, start the hub, wait for signals. Nothing else lives here.

/// Writes `text` to standard error with one write(2).
func printError(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

let arguments = ProcessEnvironment.arguments()

let parsed: (config: HubConfig, logLevel: Log.Level, help: Bool, version: Bool, checkOnly: Bool)
do {
    parsed = try HubOptions.parse(
        arguments, environment: ProcessEnvironment.current())
} catch {
    // The message and where to look, not the 60-line usage: it stays in sight in journald.
    printError("Error: \(error)\nSee 'pushhub --help'.\n")
    exit(2)
}
if parsed.version {
    print("pushhub \(BuildInfo.description)")
    exit(0)
}
if parsed.checkOnly {
    print("the configuration is valid")
    exit(0)
}
if parsed.help {
    print(HubOptions.usage)
    exit(0)
}
Log.setLevel(parsed.logLevel)

// Signals are taken synchronously through a signalfd on this thread: block them before any
// loop thread starts so that every thread inherits the mask. SIGPIPE is ignored: a peer that
// went away is an EPIPE from writev, handled per connection.
signal(SIGPIPE, SIG_IGN)
var signals = sigset_t()
sigemptyset(&signals)
for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, signal) }
pthread_sigmask(SIG_BLOCK, &signals, nil)
let signalFD = signalfd(-1, &signals, Int32(SFD_CLOEXEC))

let descriptorLimit = SystemInfo.raiseDescriptorLimit()

let notifier = ServiceNotifier(environment: ProcessEnvironment.current())
let hub: Hub
do {
    hub = try Hub(config: parsed.config, notifier: notifier)
} catch {
    Log.error("cannot start", [("error", "\(error)")])
    exit(1)
}
// A secret is shown only on a terminal (a newcomer's `make run`); a log that is kept (journald,
// a file) gets where it is, never its value.
for name in hub.secrets.generated {
    let value = name == "admin.token" ? hub.secrets.adminToken : hub.secrets.jwtSecret
    let file = parsed.config.dataDirectory + "/" + name
    if isatty(STDERR_FILENO) == 1 {
        Log.info("generated \(name) (shown once; it is in the data dir)", [("file", file), ("value", value)])
    } else {
        Log.info("generated \(name) (read it from the data dir)", [("file", file)])
    }
}
Log.always(
    "listening",
    [
        ("client", hub.clientAddress.description), ("admin", hub.adminAddress.description),
        ("loops", parsed.config.effectiveLoops), ("data", parsed.config.dataDirectory),
        ("echo_path", parsed.config.echoPath ?? ""), ("dev", parsed.config.dev), ("max_fds", descriptorLimit),
        ("tls", parsed.config.tls?.description ?? "off"), ("admin_tls", parsed.config.adminTLS?.description ?? "off"),
    ])

if parsed.config.dev {
    // 0.0.0.0 listens everywhere; a browser on this machine reaches it at 127.0.0.1.
    let host = hub.clientAddress.host == "0.0.0.0" ? "127.0.0.1" : hub.clientAddress.host
    let scheme = parsed.config.tls == nil ? "http" : "https"
    Log.always("demo page (dev mode): open \(scheme)://\(host):\(hub.clientAddress.port)/ in a browser")
}
notifier.notify("READY=1\nMAINPID=\(getpid())\nSTATUS=listening on \(hub.clientAddress), admin \(hub.adminAddress)")

/// SIGHUP: the flags, the environment and the config file read again; the reloadable settings
/// go to every loop, the others are logged as waiting for a restart. A config that no longer
/// parses is refused whole (the hub keeps running as it was).
func reload(_ running: HubConfig) -> HubConfig {
    let parsed: (config: HubConfig, logLevel: Log.Level, help: Bool, version: Bool, checkOnly: Bool)
    do {
        parsed = try HubOptions.parse(
            arguments, environment: ProcessEnvironment.current())
    } catch {
        Log.error("SIGHUP: the configuration is refused; nothing changed", [("error", "\(error)")])
        return running
    }
    let (config, changed, needRestart) = ConfigReload.applying(parsed.config, to: running)
    hub.reconfigure(config)
    Log.setLevel(parsed.logLevel)
    Log.info(
        "SIGHUP: configuration reloaded",
        [("changed", changed.joined(separator: ",")), ("need_restart", needRestart.joined(separator: ","))])
    return config
}

var running = parsed.config
var info = signalfd_siginfo()
while true {
    let count = read(signalFD, &info, MemoryLayout<signalfd_siginfo>.size)
    if count < 0 && errno == EINTR { continue }
    guard count == MemoryLayout<signalfd_siginfo>.size else {
        hub.shutdown(drain: running.drainTimeout)
        break
    }
    if Int32(info.ssi_signo) == SIGHUP {
        notifier.notify("RELOADING=1\nMONOTONIC_USEC=\(MonotonicClock.now() / 1000)")
        running = reload(running)
        notifier.notify("READY=1")
        continue
    }
    notifier.notify("STOPPING=1")
    // /readyz answers 503 from here on; the line below is logged after that holds.
    hub.shutdown(drain: running.drainTimeout)
    Log.info(
        "shutting down",
        [("signal", Int(info.ssi_signo)), ("drain_s", Int(running.drainTimeout.components.seconds))])
    break
}
hub.join()
Log.always("stopped")
exit(0)
