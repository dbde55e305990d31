import Glibc

/// A host name looked up on a thread of its own: `getaddrinfo` blocks — for seconds when DNS is
/// slow or down — and a loop must never wait (the push links reach APNs and FCM by name). An IP
/// literal is resolved at once, on the caller's thread: no DNS is asked.
///
/// Invariant: `result` is set once (by the lookup's thread, or in `init` for a literal) and only
/// read after.
final class AddressLookup: Sendable {
    private let outcome = PthreadMutex<Result<ResolvedAddress, SystemError>?>(nil)

    init(_ address: SocketAddress) {
        if address.isIPLiteral {
            let found = Self.lookUp(address)
            outcome.withLock { $0 = found }
            return
        }
        let outcome = self.outcome
        do throws(SystemError) {
            try NativeThread.detach {
                let found = Self.lookUp(address)
                outcome.withLock { $0 = found }
            }
        } catch {
            outcome.withLock { $0 = .failure(error) }  // no thread to look it up on: fails like a lookup
        }
    }

    /// The first address the host resolves to, or why it does not; nil while the lookup runs.
    var result: Result<ResolvedAddress, SystemError>? { outcome.withLock { $0 } }

    private static func lookUp(_ address: SocketAddress) -> Result<ResolvedAddress, SystemError> {
        do throws(SystemError) {
            guard let first = try ResolvedAddress.resolve(address).first else {
                throw SystemError(call: "resolve \(address.host)", errno: EHOSTUNREACH)
            }
            return .success(first)
        } catch {
            return .failure(error)
        }
    }
}

extension SocketAddress {
    /// An IPv4 or IPv6 literal (`[::1]` or `::1`), which resolves without DNS.
    var isIPLiteral: Bool {
        var host = self.host
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var buffer = in6_addr()
        return inet_pton(AF_INET, host, &buffer) == 1 || inet_pton(AF_INET6, host, &buffer) == 1
    }
}
