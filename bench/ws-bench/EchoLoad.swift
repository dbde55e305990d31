import CLinux
import Glibc
import PushHub
import WSProtocol

/// Echo throughput: `connections` clients, each with one 32-byte message in flight (send, wait
/// for the echo, send again), driven from one epoll thread.
enum EchoLoad {
    struct Result {
        var messages: Int
        var seconds: Double
        var latencies: Latencies
    }

    static func run(
        server: SocketAddress, connections: Int, messageBytes: Int, warmup: Duration, duration: Duration,
        maxMessages: Int? = nil
    ) throws -> Result {
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        defer { close(epoll) }
        var frame: [UInt8] = []
        FrameEncoder.appendFrame(
            opcode: .binary, payload: [UInt8](repeating: 0x2A, count: messageBytes), maskingKey: .random(), to: &frame)
        let echoedFrameBytes = 2 + messageBytes  // unmasked, short length
        var fds: [Int32] = []
        var sentAt = [UInt64](repeating: 0, count: connections)
        var pendingBytes = [Int](repeating: 0, count: connections)
        for i in 0..<connections {
            let fd = try RawConnection.openWebSocket(to: server, from: RawConnection.source(i))
            var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: UInt64(i)))
            epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event)
            fds.append(fd)
        }
        defer { for fd in fds { close(fd) } }
        func send(_ i: Int, now: UInt64) {
            sentAt[i] = now
            _ = frame.withUnsafeBytes { Glibc.send(fds[i], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        let start = MonotonicClock.now()
        for i in 0..<connections { send(i, now: start) }
        let measureFrom = start + warmup.nanoseconds
        let end = measureFrom + duration.nanoseconds
        var latencies = Latencies()
        var measured = 0
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var now = start
        while now < end && (maxMessages.map { measured < $0 } ?? true) {
            let ready = events.withUnsafeMutableBufferPointer { epoll_wait(epoll, $0.baseAddress, 256, 100) }
            now = MonotonicClock.now()
            guard ready > 0 else { continue }
            for e in 0..<Int(ready) {
                let i = Int(events[e].data.u64)
                let n = buffer.withUnsafeMutableBytes { recv(fds[i], $0.baseAddress, $0.count, 0) }
                guard n > 0 else { continue }
                pendingBytes[i] += n
                while pendingBytes[i] >= echoedFrameBytes {
                    pendingBytes[i] -= echoedFrameBytes
                    if now >= measureFrom {
                        latencies.add(now - sentAt[i])
                        measured += 1
                    }
                    send(i, now: now)
                }
            }
        }
        let seconds = Double(min(now, end) - measureFrom) / 1e9
        return Result(messages: measured, seconds: seconds, latencies: latencies)
    }
}
