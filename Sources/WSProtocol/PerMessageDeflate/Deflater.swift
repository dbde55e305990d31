import CZlib

/// Compresses messages for permessage-deflate (RFC 7692 §7.2.1): raw DEFLATE, each message
/// ended with a sync flush whose trailing `00 00 FF FF` is removed. With `resetsEachMessage`
/// (`*_no_context_takeover`) every message is compressed alone, so its bytes can be sent to any
/// connection that agreed to the same parameters.
///
/// Invariant: `stream` is allocated once, never moves (zlib keeps a pointer to it) and is
/// initialized for the object's life; one thread at a time.
public final class Deflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private let resetsEachMessage: Bool

    /// - Parameters:
    ///   - windowBits: 9...15 (the agreed `*_max_window_bits`).
    ///   - level: zlib's 0...9 (6 is its default: a fair ratio for JSON at a low cost).
    ///   - memoryLevel: zlib's 1...9; lower takes less memory per stream.
    public init(windowBits: Int = 15, level: Int32 = 6, memoryLevel: Int32 = 8, resetsEachMessage: Bool = true) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        self.resetsEachMessage = resetsEachMessage
        let status = pushhub_deflate_init(stream, level, Int32(windowBits), memoryLevel)
        precondition(status == Z_OK, "deflateInit2 failed (\(status)): out of memory or bad parameters")
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    /// The compressed payload of one message (to send with RSV1 set on its first frame).
    public func compress(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(deflateBound(stream, uLong(message.count))) + 16)
        var produced = 0
        stream.pointee.next_in = UnsafeMutablePointer(mutating: message.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(message.count)
        repeat {
            if produced == output.count { output += [UInt8](repeating: 0, count: output.count) }
            output.withUnsafeMutableBytes { buffer in
                stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self) + produced
                stream.pointee.avail_out = uInt(buffer.count - produced)
                _ = deflate(stream, Z_SYNC_FLUSH)
                produced = buffer.count - Int(stream.pointee.avail_out)
            }
        } while stream.pointee.avail_out == 0
        stream.pointee.next_in = nil
        output.removeLast(output.count - produced)
        // RFC 7692 §7.2.1: the sync flush ends with an empty stored block, 00 00 FF FF: drop it.
        if output.count >= 4, output.suffix(4).elementsEqual([0x00, 0x00, 0xFF, 0xFF]) { output.removeLast(4) }
        if resetsEachMessage { deflateReset(stream) }
        return output
    }

    public func compress(_ message: [UInt8]) -> [UInt8] { message.withUnsafeBytes { compress($0) } }
}
