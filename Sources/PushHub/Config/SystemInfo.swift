import Glibc

/// Facts about the machine read once.
public enum SystemInfo {
    public static var onlineCores: Int { Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) }
}

extension SystemInfo {
    /// Descriptors kept free of client connections for the admin listener and the journal.
    static let descriptorReserve = 16

    /// The soft limit on open descriptors now.
    static func descriptorLimit() -> Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(min(limit.rlim_cur, UInt(Int32.max)))
    }

    /// Raises the soft limit on open descriptors to the hard limit: every connection is one.
    /// - Returns: the limit now in force.
    @discardableResult
    public static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return Int(limit.rlim_cur)
    }
}
