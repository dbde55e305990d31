import Glibc

/// The hub process as the kernel counts it: its memory (`/v1/stats` `memory_bytes`, the console)
/// and Prometheus's standard `process_*` metrics (the names every exporter uses, so that
/// dashboards and alerts written for other services work on the hub unchanged).
///
/// Everything is read from procfs when asked (a scrape, a stats request); nil where there is no
/// procfs, and then the metric is left out rather than exported as 0.
enum ProcessStatus {
    /// Resident set size in bytes: `/proc/self/statm`'s second field, in pages.
    static func residentBytes() -> Int? {
        statm().map { $0.resident * pageSize }
    }

    /// The `process_*` metrics in Prometheus text exposition format.
    static func exposition() -> String {
        var rows: [(name: String, type: String, help: String, value: String)] = []
        if let pages = statm() {
            rows.append(
                (
                    "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
                    "\(pages.resident * pageSize)"
                ))
            rows.append(
                ("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", "\(pages.size * pageSize)"))
        }
        if let stat = stat() {
            let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
            rows.append(
                (
                    "process_cpu_seconds_total", "counter", "User and system CPU time spent in seconds.",
                    "\(Double(stat.userTicks + stat.systemTicks) / ticks)"
                ))
            rows.append(
                (
                    "process_start_time_seconds", "gauge",
                    "Start time of the process since the Unix epoch in seconds.",
                    "\(bootTime() + Double(stat.startTicks) / ticks)"
                ))
        }
        if let open = openDescriptors() {
            rows.append(("process_open_fds", "gauge", "Number of open file descriptors.", "\(open)"))
        }
        rows.append(
            ("process_max_fds", "gauge", "Maximum number of open file descriptors.", "\(SystemInfo.descriptorLimit())"))
        return rows.map { PrometheusText.family($0.name, $0.type, $0.help, $0.value) }
            .joined()
    }

    private static var pageSize: Int { Int(sysconf(Int32(_SC_PAGESIZE))) }

    /// `/proc/self/statm`: total program size and resident set, in pages.
    private static func statm() -> (size: Int, resident: Int)? {
        guard let text = read("/proc/self/statm") else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let size = Int(fields[0]), let resident = Int(fields[1]) else { return nil }
        return (size, resident)
    }

    /// `/proc/self/stat`'s utime, stime and starttime (fields 14, 15 and 22, in clock ticks). The
    /// command name (field 2) is in parentheses and may hold spaces: fields are counted after
    /// its last `)`.
    private static func stat() -> (userTicks: Int, systemTicks: Int, startTicks: Int)? {
        guard let text = read("/proc/self/stat"), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state): field n is fields[n - 3].
        guard fields.count > 19, let user = Int(fields[11]), let system = Int(fields[12]), let start = Int(fields[19])
        else { return nil }
        return (user, system, start)
    }

    /// The boot time (Unix seconds), as the clocks tell it: now less the time since boot. Not
    /// `/proc/stat`'s `btime`: the systemd unit's `ProcSubset=pid` hides that file, and
    /// `starttime` is counted on the boot clock (CLOCK_BOOTTIME) that this reads.
    private static func bootTime() -> Double {
        var wall = timespec()
        var sinceBoot = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        clock_gettime(CLOCK_BOOTTIME, &sinceBoot)
        return Double(wall.tv_sec - sinceBoot.tv_sec) + Double(wall.tv_nsec - sinceBoot.tv_nsec) / 1e9
    }

    /// Entries of `/proc/self/fd`, less the one this listing opens.
    private static func openDescriptors() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            if entry.pointee.d_name.0 != 0x2E { count += 1 }  // not "." or ".."
        }
        return count - 1
    }

    /// A procfs file's text (nil where it cannot be read).
    private static func read(_ path: String) -> String? {
        do {
            guard let bytes = try FileBytes.read(path, chunkSize: 4096), !bytes.isEmpty else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        } catch {
            return nil  // a file that cannot be read leaves its metrics out, as where there is no procfs
        }
    }
}
