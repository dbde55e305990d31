import Glibc
import Testing

@testable import PushHub

@Suite struct OutboundQueueTests {
    @Test("bytes come out in order across chunks and partial writes")
    func ordering() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
        var writer = Socket(fd: fds[0])
        var reader = Socket(fd: fds[1])
        defer {
            writer.close()
            reader.close()
        }
        var queue = OutboundQueue()
        var expected: [UInt8] = []
        for i in 0..<1200 {
            let piece = [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 1 + i % 700)
            queue.append(piece)
            expected += piece
        }
        #expect(queue.pendingBytes == expected.count)
        var received: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
        defer { buffer.deallocate() }
        while !queue.isEmpty {
            _ = try queue.write(to: writer)
            while case .processed(let n) = try reader.read(into: buffer), n > 0 { received += buffer[0..<n] }
        }
        #expect(received == expected)
        #expect(queue.pendingBytes == 0)
    }
}
