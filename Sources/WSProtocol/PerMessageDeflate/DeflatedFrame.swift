/// The compressed twin of a complete, unmasked data frame (RFC 7692 §6): the same message with
/// RSV1 set and its payload deflated. A server that agreed `server_no_context_takeover` with
/// every client can make it once and send the same bytes to all of them.
public enum DeflatedFrame {
    /// - Parameters:
    ///   - frame: one final, unmasked frame as `FrameEncoder.appendFrame` makes it.
    ///   - deflater: one that resets after every message.
    ///   - minimumBytes: payloads smaller than this are not worth compressing.
    /// - Returns: nil for a control frame, a payload under `minimumBytes`, or when the compressed
    ///   frame would be no smaller (a message may always go uncompressed, §6).
    public static func make(from frame: [UInt8], with deflater: Deflater, minimumBytes: Int) -> [UInt8]? {
        guard frame.count >= 2 else { return nil }
        let opcode = frame[0] & 0x0F
        guard opcode == Opcode.text.rawValue || opcode == Opcode.binary.rawValue else { return nil }
        precondition(frame[0] & 0x80 != 0 && frame[1] & 0x80 == 0, "only final, unmasked frames are compressed whole")
        let headerSize = FrameDecoder.headerSize(frame[0], frame[1])
        guard frame.count - headerSize >= minimumBytes else { return nil }
        let compressed = frame.withUnsafeBytes { deflater.compress(UnsafeRawBufferPointer(rebasing: $0[headerSize...])) }
        let header = FrameHeader(
            fin: true, rsv: FrameHeader.compressedBit, opcode: opcode == Opcode.text.rawValue ? .text : .binary,
            payloadLength: UInt64(compressed.count))
        guard header.encodedSize + compressed.count < frame.count else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(header.encodedSize + compressed.count)
        FrameEncoder.appendHeader(header, to: &out)
        out += compressed
        return out
    }
}
