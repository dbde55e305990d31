import CLinux
import Glibc

/// systemd's readiness protocol (sd_notify(3)) without libsystemd: state lines sent as one
/// datagram to the AF_UNIX socket named by `$NOTIFY_SOCKET` (`@name` is the abstract namespace).
/// Without that variable every call does nothing. `READY=1` once listening, `RELOADING=1` on
/// SIGHUP, `STOPPING=1` on SIGTERM, and `WATCHDOG=1` every half `$WATCHDOG_USEC` from the control
/// plane's loop, so a control plane that stops turning is restarted by systemd.
///
/// Invariant: only the process `$WATCHDOG_PID` names (or any, when unset) pings the watchdog.
public final class ServiceNotifier: Sendable {
    private let address: sockaddr_un?
    private let length: socklen_t
    /// Nanoseconds between watchdog pings (nil: the unit asks for none).
    public let watchdogInterval: UInt64?

    public init(environment: [String: String]) {
        var address: sockaddr_un?
        var length: socklen_t = 0
        if var path = environment["NOTIFY_SOCKET"], !path.isEmpty, path.utf8.count < 108 {
            var un = sockaddr_un()
            un.sun_family = sa_family_t(AF_UNIX)
            let abstract = path.hasPrefix("@")
            if abstract { path.removeFirst() }
            // The abstract namespace is a leading NUL, then the name.
            let bytes = (abstract ? [UInt8(0)] : []) + Array(path.utf8)
            withUnsafeMutableBytes(of: &un.sun_path) { $0.copyBytes(from: bytes) }
            address = un
            length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        }
        self.address = address
        self.length = length
        let forUs = environment["WATCHDOG_PID"].map { Int32($0) == getpid() } ?? true
        if address != nil, forUs, let text = environment["WATCHDOG_USEC"], let micros = UInt64(text), micros > 0 {
            watchdogInterval = micros * 1000 / 2
        } else {
            watchdogInterval = nil
        }
    }

    /// Sends `state` (e.g. "READY=1\nSTATUS=…"); failures are ignored, as sd_notify's are.
    public func notify(_ state: String) {
        guard var address else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(state.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL), $0, length)
            }
        }
    }
}
