import Glibc

/// Drives `LoopSource`s with poll(2) the way an `EventLoop` drives them with epoll: readiness,
/// then `tick` for deadlines and output. For work before the loops start (a scaled-out hub's
/// first load of the shared state) and for tests of a source without a whole hub.
final class PollDriver {
    var sources: [LoopSource]

    init(_ sources: [LoopSource]) { self.sources = sources }

    /// Runs until `condition` holds (true) or `timeout` passes (false).
    @discardableResult
    func run(for timeout: Duration = .seconds(5), until condition: () -> Bool) -> Bool {
        let deadline = MonotonicClock.now() + timeout.nanoseconds
        while true {
            let now = MonotonicClock.now()
            for source in sources { source.tick(now: now) }
            if condition() { return true }
            if now >= deadline { return false }
            let watched = sources.compactMap { source in source.watch.map { (source, $0) } }
            var descriptors = watched.map { _, watch in
                pollfd(fd: watch.fd, events: Int16(POLLIN) | (watch.writable ? Int16(POLLOUT) : 0), revents: 0)
            }
            let next = sources.compactMap(\.nextDeadline).min().map { $0 > now ? $0 - now : 0 } ?? 10_000_000
            let wait = Int32(min(next, 10_000_000, deadline - now) / 1_000_000)
            _ = poll(&descriptors, nfds_t(descriptors.count), wait)
            let woke = MonotonicClock.now()
            for (index, (source, _)) in watched.enumerated() where descriptors[index].revents != 0 {
                let events = descriptors[index].revents
                source.ready(
                    readable: events & Int16(POLLIN) != 0, writable: events & Int16(POLLOUT) != 0,
                    hangup: events & (Int16(POLLHUP) | Int16(POLLERR)) != 0, now: woke)
            }
        }
    }
}
