/// The incremental frame decoder (RFC 6455 §5.2): bytes in, `Step`s out.
///
/// Feed it whatever the socket returned; it yields the same headers and payload bytes however
/// the input is split, one byte at a time included. Payload is unmasked in place and handed
/// back as a range of the caller's buffer, so decoding copies nothing.
///
/// Invariants: a `.header` step is followed by `.payload` steps whose lengths add up to
/// `payloadLength`, the last one with `isFrameEnd` (a zero-length frame gets one empty
/// `.payload`); a header is only yielded once it passed every per-frame rule and limit.
public struct FrameDecoder: Sendable {
    /// Which side we are: a server requires masked frames, a client refuses them (§5.1).
    public enum Role: Sendable { case server, client }

    /// One decoding result: need more input, a validated header, or a run of unmasked payload.
    public enum Step: Equatable, Sendable {
        case needMoreBytes
        case header(FrameHeader)
        /// Unmasked payload bytes at `range` of the input buffer; valid until the next call.
        case payload(Range<Int>, isFrameEnd: Bool)
    }

    enum State: Sendable {
        case header
        case payload(remaining: UInt64, maskingKey: MaskingKey?, phase: Int)
    }

    public let role: Role
    public let maxFrameBytes: Int
    /// RSV bits a negotiated extension gave meaning to (RSV1 = 0b100 for permessage-deflate).
    public var allowedReservedBits: UInt8 = 0
    var state: State = .header
    /// The bytes of a header that arrived split over several inputs (inline: no allocation).
    var partialHeader = PartialHeader()

    public init(role: Role, maxFrameBytes: Int) {
        self.role = role
        self.maxFrameBytes = maxFrameBytes
    }

    /// Whether the next byte starts a frame (nothing of a header or payload is pending).
    public var isAtFrameBoundary: Bool {
        switch state {
        case .header: partialHeader.isEmpty
        case .payload: false
        }
    }

    /// Decodes the next step from `buffer[offset...]`, advancing `offset` past what it consumed.
    public mutating func next(in buffer: UnsafeMutableRawBufferPointer, offset: inout Int) throws(ProtocolError) -> Step
    {
        switch state {
        case .header:
            return try nextHeader(in: UnsafeRawBufferPointer(buffer), offset: &offset)
        case .payload(let remaining, let maskingKey, let phase):
            let available = buffer.count - offset
            if remaining > 0 && available == 0 { return .needMoreBytes }
            let take = Int(min(remaining, UInt64(available)))
            let range = offset..<(offset + take)
            var nextPhase = phase
            if let maskingKey {
                nextPhase = maskingKey.apply(to: UnsafeMutableRawBufferPointer(rebasing: buffer[range]), phase: phase)
            }
            offset += take
            let left = remaining - UInt64(take)
            state = left == 0 ? .header : .payload(remaining: left, maskingKey: maskingKey, phase: nextPhase)
            return .payload(range, isFrameEnd: left == 0)
        }
    }

    private mutating func nextHeader(in buffer: UnsafeRawBufferPointer, offset: inout Int) throws(ProtocolError) -> Step
    {
        if partialHeader.isEmpty {
            // Fast path: the whole header is in this input.
            let available = buffer.count - offset
            if available >= 2 {
                let needed = Self.headerSize(buffer[offset], buffer[offset + 1])
                if available >= needed {
                    let header = try decodeHeader(UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + needed)]))
                    offset += needed
                    return accept(header)
                }
            }
        }
        // Slow path: collect the header byte by byte across inputs.
        while offset < buffer.count {
            partialHeader.append(buffer[offset])
            offset += 1
            if partialHeader.count >= 2 && partialHeader.count == Self.headerSize(partialHeader[0], partialHeader[1]) {
                let header = try partialHeader.withUnsafeBytes { bytes in
                    Result { () throws(ProtocolError) in try decodeHeader(bytes) }
                }.get()
                partialHeader.removeAll()
                return accept(header)
            }
        }
        return .needMoreBytes
    }

    private mutating func accept(_ header: FrameHeader) -> Step {
        state = .payload(remaining: header.payloadLength, maskingKey: header.maskingKey, phase: 0)
        return .header(header)
    }

    /// Header bytes implied by its first two bytes.
    static func headerSize(_ b0: UInt8, _ b1: UInt8) -> Int {
        let length7 = b1 & 0x7F
        let extended = length7 == 126 ? 2 : (length7 == 127 ? 8 : 0)
        return 2 + extended + (b1 & 0x80 != 0 ? 4 : 0)
    }

    /// Decodes and checks a complete header (`bytes.count == headerSize`).
    private func decodeHeader(_ bytes: UnsafeRawBufferPointer) throws(ProtocolError) -> FrameHeader {
        let b0 = bytes[0], b1 = bytes[1]
        let rsv = (b0 >> 4) & 0x7
        if rsv & ~allowedReservedBits != 0 { throw .reservedBitsSet(rsv) }
        guard let opcode = Opcode(rawValue: b0 & 0x0F) else { throw .reservedOpcode(b0 & 0x0F) }
        let fin = b0 & 0x80 != 0
        let masked = b1 & 0x80 != 0
        switch role {
        case .server: if !masked { throw .unmaskedClientFrame }
        case .client: if masked { throw .maskedServerFrame }
        }
        var index = 2
        var length = UInt64(b1 & 0x7F)
        if length == 126 {
            length = UInt64(bytes[2]) << 8 | UInt64(bytes[3])
            index = 4
            if length < 126 { throw .nonMinimalLength(length) }
        } else if length == 127 {
            length = 0
            for i in 2..<10 { length = length << 8 | UInt64(bytes[i]) }
            index = 10
            if length & (1 << 63) != 0 { throw .lengthHighBitSet }
            if length <= UInt64(UInt16.max) { throw .nonMinimalLength(length) }
        }
        if opcode.isControl {
            if !fin { throw .fragmentedControlFrame(opcode) }
            if length > 125 { throw .controlFrameTooLong(opcode, length: length) }
        }
        if length > UInt64(maxFrameBytes) { throw .frameTooBig(length: length, limit: maxFrameBytes) }
        let maskingKey = masked ? MaskingKey(bytes[index], bytes[index + 1], bytes[index + 2], bytes[index + 3]) : nil
        return FrameHeader(fin: fin, rsv: rsv, opcode: opcode, maskingKey: maskingKey, payloadLength: length)
    }
}

/// Up to 14 header bytes held inline (a frame header is at most `FrameHeader.maxEncodedSize`).
struct PartialHeader: Sendable {
    private var storage: (UInt64, UInt64) = (0, 0)
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    subscript(index: Int) -> UInt8 {
        Swift.withUnsafeBytes(of: storage) { $0[index] }
    }

    mutating func append(_ byte: UInt8) {
        precondition(count < FrameHeader.maxEncodedSize, "a header is at most 14 bytes")
        let index = count
        withUnsafeMutableBytes(of: &storage) { $0[index] = byte }
        count += 1
    }

    mutating func removeAll() { count = 0 }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try Swift.withUnsafeBytes(of: storage) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }
}
