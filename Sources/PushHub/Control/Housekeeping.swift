/// What the control plane's loop does besides its work, on its ticks: pings systemd's watchdog
/// (when asked for) and hands freed memory back to the system (`MemoryReclaimer`).
struct Housekeeping {
    /// systemd's watchdog (nil: not asked for).
    private let notifier: ServiceNotifier?
    private var watchdogDue: UInt64?
    private var reclaimer: MemoryReclaimer
    private let metrics: Metrics

    init(notifier: ServiceNotifier?, metrics: Metrics, now: UInt64) {
        self.notifier = notifier
        self.metrics = metrics
        watchdogDue = notifier?.watchdogInterval.map { now + $0 }
        reclaimer = MemoryReclaimer(now: now)
    }

    mutating func tick(now: UInt64) {
        if let due = watchdogDue, now >= due, let notifier, let interval = notifier.watchdogInterval {
            notifier.notify("WATCHDOG=1")
            watchdogDue = now + interval
        }
        if let held = reclaimer.check(now: now) {
            metrics.memoryTrims.add(1, ordering: .relaxed)
            metrics.memoryTrimmedBytes.add(held, ordering: .relaxed)
        }
    }

    var nextDeadline: UInt64 { min(reclaimer.nextCheck, watchdogDue ?? .max) }
}
