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
    /// Then sizes the descriptor table for it (`presizeDescriptorTable`).
    /// - Returns: the limit now in force.
    @discardableResult
    public static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        let current = Int(min(limit.rlim_cur, UInt(Int32.max)))
        presizeDescriptorTable(descriptors: min(current, presizedDescriptorsMax))
        return current
    }

    /// The most descriptors the table is sized for at the start (2 MiB of kernel memory at 8 bytes
    /// each); above it the kernel grows the table as before.
    static let presizedDescriptorsMax = 1 << 18

    /// Grows the process's descriptor table to hold `descriptors` now, at the start. The kernel
    /// grows it by doubling as descriptors are opened, and in a process with more than one thread
    /// each growth waits for an RCU grace period (`synchronize_rcu` in `expand_fdtable`): the
    /// loop whose `accept` grew it stopped for 10–30 ms, six times during the first 10,000
    /// connects of a fresh hub. The table never shrinks, so one `dup2` to the highest descriptor,
    /// closed at once, sizes it for good.
    static func presizeDescriptorTable(descriptors: Int) {
        // Already open (inherited from the parent): the table holds it, and dup2 would close it.
        guard descriptors > 1, fcntl(Int32(descriptors - 1), F_GETFD) == -1 else { return }
        let source = open("/dev/null", O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { return }  // no /dev/null: the kernel grows the table as it goes
        let highest = dup2(source, Int32(descriptors - 1))
        if highest >= 0 { close(highest) }
        close(source)
    }
}
