import CLinux
import Glibc
import PushHub
import WSProtocol

/// Handshakes per second: `concurrency` connections in flight, each connect → upgrade request →
/// 101 → reset, then a new one, driven from one epoll thread.
enum HandshakeLoad {
    static func run(server: SocketAddress, concurrency: Int, duration: Duration) throws -> (count: Int, seconds: Double)
    {
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        defer { close(epoll) }
        let request = ClientHandshake(host: server.description, path: "/echo").request
        var slots = [Int32](repeating: -1, count: concurrency)
        var sentRequest = [Bool](repeating: false, count: concurrency)
        var opened = 0
        func open(_ slot: Int) throws {
            let fd = try RawConnection.connect(to: server, from: RawConnection.source(opened), nonBlocking: true)
            opened += 1
            slots[slot] = fd
            sentRequest[slot] = false
            var event = epoll_event(events: EPOLLOUT.rawValue | EPOLLIN.rawValue, data: epoll_data_t(u64: UInt64(slot)))
            epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event)
        }
        for slot in 0..<concurrency { try open(slot) }
        let start = MonotonicClock.now()
        let end = start + duration.nanoseconds
        var completed = 0
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while MonotonicClock.now() < end {
            let ready = events.withUnsafeMutableBufferPointer { epoll_wait(epoll, $0.baseAddress, 256, 100) }
            guard ready > 0 else { continue }
            for e in 0..<Int(ready) {
                let slot = Int(events[e].data.u64)
                let fd = slots[slot]
                if !sentRequest[slot] && events[e].events & EPOLLOUT.rawValue != 0 {
                    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    sentRequest[slot] = true
                    var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: UInt64(slot)))
                    epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event)
                    continue
                }
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n > 12 && buffer[9] == UInt8(ascii: "1") && buffer[10] == UInt8(ascii: "0")
                    && buffer[11] == UInt8(ascii: "1")
                {
                    completed += 1
                } else if n < 0 && errno == EAGAIN {
                    continue
                }
                close(fd)
                try open(slot)
            }
        }
        for fd in slots where fd >= 0 { close(fd) }
        return (completed, Double(MonotonicClock.now() - start) / 1e9)
    }
}
