import Glibc
import PushHub

/// Hub memory per idle WebSocket connection: RSS before and after opening `count` upgraded,
/// silent connections from 127.0.0.2 ... 127.0.0.250.
enum IdleMemory {
    static func run(hub: HubProcess, count: Int) throws -> (before: Int, after: Int, opened: Int) {
        usleep(200_000)
        let before = hub.residentBytes
        var fds: [Int32] = []
        fds.reserveCapacity(count)
        defer { for fd in fds { close(fd) } }
        for i in 0..<count {
            fds.append(try RawConnection.openWebSocket(to: hub.client, from: RawConnection.source(i)))
        }
        usleep(500_000)
        return (before, hub.residentBytes, fds.count)
    }
}
