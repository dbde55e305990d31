import CZlib

/// Decompresses permessage-deflate messages (RFC 7692 §7.2.2): the payload with `00 00 FF FF`
/// appended, inflated as raw DEFLATE, never to more than a limit — a message that would grow
/// past it (a deflate bomb) is refused after at most `limit` bytes were produced, closing 1009.
///
/// Invariant: `stream` is allocated once, never moves and is initialized for the object's
/// life; with `resetsEachMessage` no state survives a message (one inflater can serve every
/// connection of a loop); one thread at a time. Memory: zlib's state and 32 KiB window, and a
/// 32 KiB scratch buffer.
public final class Inflater {
    /// Why a message could not be inflated.
    public enum Failure: Error, Equatable, Sendable {
        /// It would be larger than the limit (1009).
        case tooBig(limit: Int)
        /// Not valid DEFLATE data: a protocol error (1002).
        case corrupt(String)
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private let resetsEachMessage: Bool
    /// zlib inflates into this, and each step is appended to the output in one copy.
    private let scratch: UnsafeMutableBufferPointer<UInt8> = .allocate(capacity: 32 << 10)
    private static let tail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    public init(windowBits: Int = 15, resetsEachMessage: Bool = true) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        self.resetsEachMessage = resetsEachMessage
        let status = pushhub_inflate_init(stream, Int32(windowBits))
        precondition(status == Z_OK, "inflateInit2 failed (\(status)): out of memory")
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        scratch.deallocate()
    }

    /// The message `payload` (the frames' payloads joined) decompressed, at most `limit` bytes.
    public func decompress(_ payload: UnsafeRawBufferPointer, limit: Int) throws(Failure) -> [UInt8] {
        var output: [UInt8] = []
        try decompress(payload, into: &output, limit: limit)
        return output
    }

    public func decompress(_ payload: [UInt8], limit: Int) throws(Failure) -> [UInt8] {
        try payload.withUnsafeBytes { bytes in Result { () throws(Failure) in try decompress(bytes, limit: limit) } }.get()
    }

    /// Decompresses `payload` into `output` (replacing its contents, keeping its capacity), so a
    /// reader can reuse one buffer for every message. `output` never holds more than `limit`
    /// bytes, whatever the payload claims.
    public func decompress(_ payload: UnsafeRawBufferPointer, into output: inout [UInt8], limit: Int) throws(Failure) {
        output.removeAll(keepingCapacity: true)
        defer { if resetsEachMessage { inflateReset(stream) } }
        try feed(payload, into: &output, limit: limit)
        try Self.tail.withUnsafeBytes { tail in Result { () throws(Failure) in try feed(tail, into: &output, limit: limit) } }
            .get()
    }

    /// Inflates `input` onto the end of `output`, a scratch buffer at a time, until zlib has
    /// taken all of the input and has nothing more to give.
    private func feed(_ input: UnsafeRawBufferPointer, into output: inout [UInt8], limit: Int) throws(Failure) {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        defer { stream.pointee.next_in = nil }
        while true {
            stream.pointee.next_out = scratch.baseAddress
            stream.pointee.avail_out = uInt(scratch.count)
            let status = inflate(stream, Z_SYNC_FLUSH)
            let produced = scratch.count - Int(stream.pointee.avail_out)
            guard output.count + produced <= limit else { throw .tooBig(limit: limit) }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[0..<produced]))
            switch status {
            case Z_OK:
                // Output space left over means zlib took all it could and gave all it had.
                if stream.pointee.avail_in == 0 && produced < scratch.count { return }
            case Z_BUF_ERROR:
                return  // no progress possible: the input is used up
            case Z_STREAM_END:
                return  // a final block: what follows is ignored (RFC 7692 §7.2.2 allows BFINAL)
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "status \(status)"
                throw .corrupt(message)
            }
        }
    }
}
