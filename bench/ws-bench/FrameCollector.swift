import CLinux
import Glibc
import PushHub

/// The receiving side of the screen and sync benchmarks: many client sockets on one epoll,
/// each arriving server frame stamped with the time it was read.
///
/// Invariant: owns its sockets and epoll descriptor (closed on deinit); counter i belongs to
/// the i-th socket added.
final class FrameCollector {
    /// Counts complete server frames per connection (unmasked, any length).
    struct FrameCounter {
        var pending: [UInt8] = []

        mutating func feed(_ bytes: UnsafeRawBufferPointer) -> (frames: Int, lastLength: Int) {
            pending.append(contentsOf: bytes)
            var frames = 0, last = 0, offset = 0
            while pending.count - offset >= 2 {
                var length = Int(pending[offset + 1] & 0x7F)
                var header = 2
                if length == 126 {
                    guard pending.count - offset >= 4 else { break }
                    length = Int(pending[offset + 2]) << 8 | Int(pending[offset + 3])
                    header = 4
                } else if length == 127 {
                    guard pending.count - offset >= 10 else { break }
                    length = (2..<10).reduce(0) { $0 << 8 | Int(pending[offset + $1]) }
                    header = 10
                }
                guard pending.count - offset >= header + length else { break }
                offset += header + length
                frames += 1
                last = header + length
            }
            pending.removeFirst(offset)
            return (frames, last)
        }
    }

    private let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
    private var links: [Link] = []
    private var counters: [FrameCounter] = []
    private var events = [epoll_event](repeating: epoll_event(), count: 1024)
    private var buffer = [UInt8](repeating: 0, count: 64 << 10)

    deinit {
        for link in links { close(link.fd) }
        close(epoll)
    }

    func add(_ fd: Int32) { add(Link(fd: fd, ssl: nil)) }

    func add(_ link: Link) {
        var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: UInt64(links.count)))
        epoll_ctl(epoll, EPOLL_CTL_ADD, link.fd, &event)
        links.append(link)
        counters.append(FrameCounter())
    }

    /// Reads until `expected` frames arrived in all, or `deadline` (monotonic ns) passes.
    /// - Returns: each frame's arrival time, and the size of the last frame seen.
    func collect(_ expected: Int, deadline: UInt64) -> (arrivals: [UInt64], lastFrame: Int) {
        var arrivals: [UInt64] = []
        arrivals.reserveCapacity(expected)
        var lastFrame = 0
        while arrivals.count < expected && MonotonicClock.now() < deadline {
            let ready = events.withUnsafeMutableBufferPointer { epoll_wait(epoll, $0.baseAddress, 1024, 100) }
            let now = MonotonicClock.now()
            guard ready > 0 else { continue }
            for e in 0..<Int(ready) {
                let i = Int(events[e].data.u64)
                repeat {
                    let n = buffer.withUnsafeMutableBytes { links[i].read(into: $0) }
                    guard n > 0 else { break }
                    let (frames, last) = buffer.withUnsafeBytes {
                        counters[i].feed(UnsafeRawBufferPointer(rebasing: $0[0..<n]))
                    }
                    for _ in 0..<frames { arrivals.append(now) }
                    if frames > 0 { lastFrame = last }
                } while links[i].hasBufferedInput
            }
        }
        return (arrivals, lastFrame)
    }
}
