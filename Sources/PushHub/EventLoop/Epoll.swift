import CLinux
import Glibc

/// An epoll instance (level-triggered) whose registrations carry a 64-bit token.
///
/// Invariant: the events buffer is allocated once; `wait` reuses it.
final class Epoll {
    struct Event {
        var token: UInt64
        var isReadable: Bool
        var isWritable: Bool
        /// Hang-up or error: the socket is finished whatever else is set.
        var isHangup: Bool
    }

    let fd: Int32
    private let events: UnsafeMutableBufferPointer<epoll_event>

    init(maxEvents: Int = 256) throws(SystemError) {
        fd = try blockingSystemCall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        events = .allocate(capacity: maxEvents)
    }

    deinit {
        events.deallocate()
        _ = Glibc.close(fd)
    }

    private func control(_ operation: Int32, fd target: Int32, token: UInt64, readable: Bool, writable: Bool)
        throws(SystemError)
    {
        // Readiness to read includes the peer's half-close; a paused reader asks for neither,
        // or a level-triggered RDHUP would wake the loop forever.
        var mask: UInt32 = 0
        if readable { mask |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if writable { mask |= EPOLLOUT.rawValue }
        var event = epoll_event(events: mask, data: epoll_data_t(u64: token))
        try blockingSystemCall("epoll_ctl") { epoll_ctl(fd, operation, target, &event) }
    }

    func add(fd target: Int32, token: UInt64, readable: Bool = true, writable: Bool = false) throws(SystemError) {
        try control(EPOLL_CTL_ADD, fd: target, token: token, readable: readable, writable: writable)
    }

    func modify(fd target: Int32, token: UInt64, readable: Bool, writable: Bool) throws(SystemError) {
        try control(EPOLL_CTL_MOD, fd: target, token: token, readable: readable, writable: writable)
    }

    func remove(fd target: Int32) {
        var event = epoll_event()
        _ = epoll_ctl(fd, EPOLL_CTL_DEL, target, &event)
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever), calls `woke` once, then `body` for each
    /// ready event.
    func wait(timeoutMilliseconds: Int32, woke: () -> Void, _ body: (Event) -> Void) throws(SystemError) {
        let count: Int32
        switch try systemCall(
            "epoll_wait", { epoll_wait(fd, events.baseAddress, Int32(events.count), timeoutMilliseconds) })
        {
        case .processed(let n): count = n
        case .wouldBlock: count = 0
        }
        woke()
        for i in 0..<Int(count) {
            let raw = events[i]
            let mask = raw.events
            body(
                Event(
                    token: raw.data.u64,
                    isReadable: mask & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0,
                    isWritable: mask & EPOLLOUT.rawValue != 0,
                    isHangup: mask & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0))
        }
    }
}
