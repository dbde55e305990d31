import CLinux
import Glibc

/// Bytes waiting to be written to one connection, written with `writev`.
///
/// Frames are encoded straight into the tail chunk; a chunk is started only when the tail
/// grows past `chunkBytes`, so steady small traffic reuses one allocation. A frame shared by
/// many connections (a fan-out) is queued as its own chunk by reference, never copied.
/// Invariants: `pendingBytes` is the sum of unwritten bytes; only the head chunk is partially
/// written (from `headOffset`); nothing is ever appended to a shared chunk.
struct OutboundQueue {
    static let chunkBytes = 256 << 10

    struct Chunk {
        var bytes: [UInt8]
        var isShared: Bool
    }

    /// Empty until the first append (an idle connection allocates nothing here).
    private var chunks: [Chunk] = []
    private var headOffset = 0
    private(set) var pendingBytes = 0

    var isEmpty: Bool { pendingBytes == 0 }

    /// Lets `body` append bytes to the tail.
    mutating func append(_ body: (inout [UInt8]) -> Void) {
        // Read the tail's fields without copying the chunk: a copy would make its storage
        // non-unique and turn the append below into a full copy.
        if chunks.isEmpty || chunks[chunks.count - 1].isShared
            || chunks[chunks.count - 1].bytes.count >= Self.chunkBytes
        {
            chunks.append(Chunk(bytes: [], isShared: false))
        }
        let last = chunks.count - 1
        let before = chunks[last].bytes.count
        body(&chunks[last].bytes)
        pendingBytes += chunks[last].bytes.count - before
    }

    /// Queues `bytes` by reference: the storage is shared with every other queue holding it.
    mutating func appendShared(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        if chunks.count == 1 && chunks[0].bytes.isEmpty {
            chunks[0] = Chunk(bytes: bytes, isShared: true)
        } else if chunks.isEmpty {
            chunks = [Chunk(bytes: bytes, isShared: true)]
        } else {
            chunks.append(Chunk(bytes: bytes, isShared: true))
        }
        pendingBytes += bytes.count
    }

    /// Queues the rest of `bytes` after its first `written` bytes went out directly.
    mutating func appendShared(_ bytes: [UInt8], written: Int) {
        precondition(isEmpty && written < bytes.count, "only an empty queue takes the rest of a direct write")
        chunks = [Chunk(bytes: bytes, isShared: true)]
        headOffset = written
        pendingBytes = bytes.count - written
    }

    mutating func append(_ bytes: [UInt8]) {
        append { $0.append(contentsOf: bytes) }
    }

    /// Writes as much as the socket takes.
    /// - Returns: bytes written; `.wouldBlock` if the socket took nothing.
    mutating func write(to socket: Socket) throws(SystemError) -> IOResult<Int> {
        try write { iovecs throws(SystemError) in try socket.writev(iovecs) }
    }

    /// Writes as much as `send` takes (`writev` on the socket, or through TLS).
    mutating func write(using send: (UnsafeBufferPointer<iovec>) throws(SystemError) -> IOResult<Int>)
        throws(SystemError) -> IOResult<Int>
    {
        var written = 0
        while pendingBytes > 0 {
            let result: IOResult<Int> = try withIovecs { iovecs throws(SystemError) in try send(iovecs) }
            switch result {
            case .wouldBlock:
                return written == 0 ? .wouldBlock : .processed(written)
            case .processed(let count):
                written += count
                consume(count)
            }
        }
        return .processed(written)
    }

    private func withIovecs<R>(_ body: (UnsafeBufferPointer<iovec>) throws(SystemError) -> R) throws(SystemError) -> R {
        // A chunk's storage is stable while `self` is not mutated; the iovecs live only for the call.
        var iovecs = (iovec(), iovec(), iovec(), iovec(), iovec(), iovec(), iovec(), iovec())
        return try withUnsafeMutableBytes(of: &iovecs) { raw throws(SystemError) -> R in
            let vectors = raw.bindMemory(to: iovec.self)
            var count = 0
            for (index, chunk) in chunks.enumerated() where count < vectors.count {
                let start = index == 0 ? headOffset : 0
                guard chunk.bytes.count > start else { continue }
                chunk.bytes.withUnsafeBytes { bytes in
                    vectors[count] = iovec(
                        iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress! + start),
                        iov_len: bytes.count - start)
                }
                count += 1
            }
            return try body(UnsafeBufferPointer(rebasing: vectors[..<count]))
        }
    }

    private mutating func consume(_ count: Int) {
        pendingBytes -= count
        var left = count
        while left > 0 {
            let available = chunks[0].bytes.count - headOffset
            if left < available {
                headOffset += left
                return
            }
            left -= available
            headOffset = 0
            if chunks.count > 1 { chunks.removeFirst() } else { releaseTail() }
        }
        if pendingBytes == 0 { releaseTail() }
    }

    /// Empties the lone tail, keeping its storage unless it grew large.
    private mutating func releaseTail() {
        if chunks.count == 1 && (chunks[0].isShared || chunks[0].bytes.capacity > Self.chunkBytes * 2) {
            chunks[0] = Chunk(bytes: [], isShared: false)
        } else if chunks.count == 1 {
            chunks[0].bytes.removeAll(keepingCapacity: true)
        }
        headOffset = 0
    }
}
