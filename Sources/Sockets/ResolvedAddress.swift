import Glibc

/// A socket address a tool can connect to: what `getaddrinfo` made of a host (an IPv4 or IPv6
/// literal — `[::1]` or `::1` — or a name) and a port.
///
/// Invariant: `storage` holds a `sockaddr_in` or `sockaddr_in6` of `length` bytes, for `family`.
public struct ResolvedAddress {
    public var family: Int32
    public var storage: sockaddr_storage
    public var length: socklen_t

    /// Every address `address.host` resolves to, in getaddrinfo's order (its preference).
    public static func resolve(_ address: SocketAddress) throws(SystemError) -> [ResolvedAddress] {
        var host = address.host
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(address.port), &hints, &list)
        guard status == 0, let list else {
            let reason = String(cString: gai_strerror(status))
            throw SystemError(call: "resolve \(address.host) (\(reason))", errno: status == EAI_SYSTEM ? errno : EINVAL)
        }
        defer { freeaddrinfo(list) }
        var resolved: [ResolvedAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            if let socketAddress = current.pointee.ai_addr {
                var storage = sockaddr_storage()
                let length = current.pointee.ai_addrlen
                withUnsafeMutableBytes(of: &storage) { target in
                    target.copyMemory(from: UnsafeRawBufferPointer(start: socketAddress, count: Int(length)))
                }
                resolved.append(ResolvedAddress(family: current.pointee.ai_family, storage: storage, length: length))
            }
            entry = current.pointee.ai_next
        }
        return resolved
    }
}
