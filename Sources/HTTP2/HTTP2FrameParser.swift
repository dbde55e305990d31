/// Turns the octets a server sends into frames (RFC 9113 §4.1), however the reads cut them:
/// `append` what arrived, then call `next` until it returns nil.
///
/// It checks what a frame's header and length alone decide (§4.2, §6): the length limit, the
/// fixed lengths, which types belong to stream 0 and which to a stream, padding. Rules that
/// need the connection's state (stream states, windows, field block order) are
/// `HTTP2ClientConnection`'s.
///
/// Invariant: the buffer holds at most one frame header, one frame of at most `maxFrameSize`
/// octets and one appended chunk: a frame's length is checked as soon as its header is in, so
/// a peer cannot make it hold more.
public struct HTTP2FrameParser: Sendable {
    /// The frame header's length: 24-bit length, type, flags, stream identifier.
    public static let headerLength = 9

    /// Our SETTINGS_MAX_FRAME_SIZE: the longest payload accepted.
    public let maxFrameSize: Int
    private var buffer: [UInt8] = []
    private var start = 0

    public init(maxFrameSize: Int = HTTP2Settings.defaultMaxFrameSize) {
        self.maxFrameSize = maxFrameSize
    }

    /// Octets received and not yet returned as frames.
    public var bufferedCount: Int { buffer.count - start }

    public mutating func append(_ bytes: some Collection<UInt8>) {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 4096 && start > buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole frame, or nil until more octets arrive.
    /// - Throws: a connection error; the parser must not be used after it.
    public mutating func next() throws(HTTP2ProtocolError) -> HTTP2Frame? {
        guard bufferedCount >= Self.headerLength else { return nil }
        let length = Int(buffer[start]) << 16 | Int(buffer[start + 1]) << 8 | Int(buffer[start + 2])
        let type = buffer[start + 3]
        let flags = buffer[start + 4]
        let streamID = Self.uint31(buffer, at: start + 5)
        guard length <= maxFrameSize else { throw .frameTooLarge(type: type, length: length, limit: maxFrameSize) }
        guard bufferedCount >= Self.headerLength + length else { return nil }
        let payloadStart = start + Self.headerLength
        let payload = buffer[payloadStart..<payloadStart + length]
        start = payloadStart + length
        guard let known = HTTP2FrameType(rawValue: type) else {
            return HTTP2Frame(streamID: streamID, .unknown(type: type, flags: flags, length: length))
        }
        return HTTP2Frame(streamID: streamID, try Self.payload(known, flags: flags, streamID: streamID, payload))
    }

    /// The payload of a frame of a known type, its header's rules checked.
    private static func payload(
        _ type: HTTP2FrameType, flags: UInt8, streamID: UInt32, _ payload: ArraySlice<UInt8>
    ) throws(HTTP2ProtocolError) -> HTTP2Frame.Payload {
        let onStream = streamID != 0
        switch type {
        case .data, .headers, .priority, .rstStream, .pushPromise, .continuation:
            guard onStream else { throw .missingStreamID(type) }
        case .settings, .ping, .goAway:
            guard !onStream else { throw .unexpectedStreamID(type, streamID: streamID) }
        case .windowUpdate:
            break
        }
        let length = payload.count
        let base = payload.startIndex
        switch type {
        case .data:
            let (body, padding) = try unpadded(type, flags: flags, payload)
            return .data(Array(body), endStream: flags & HTTP2FrameFlags.endStream != 0, padding: padding)
        case .headers:
            var (block, padding) = try unpadded(type, flags: flags, payload)
            var priority: HTTP2Priority?
            if flags & HTTP2FrameFlags.priority != 0 {
                guard block.count >= 5 else { throw .badFrameLength(type, length: length) }
                priority = Self.priority(block)
                block = block.dropFirst(5)
            }
            return .headers(
                fragment: Array(block), endStream: flags & HTTP2FrameFlags.endStream != 0,
                endHeaders: flags & HTTP2FrameFlags.endHeaders != 0, priority: priority, padding: padding)
        case .priority:
            guard length == 5 else { throw .badFrameLength(type, length: length) }
            return .priority(Self.priority(payload))
        case .rstStream:
            guard length == 4 else { throw .badFrameLength(type, length: length) }
            return .rstStream(HTTP2ErrorCode(rawValue: uint32(payload, at: base)))
        case .settings:
            let ack = flags & HTTP2FrameFlags.ack != 0
            guard ack ? length == 0 : length % 6 == 0 else { throw .badFrameLength(type, length: length) }
            let settings = stride(from: base, to: payload.endIndex, by: 6).map { at in
                HTTP2Setting(
                    HTTP2Setting.Identifier(rawValue: UInt16(payload[at]) << 8 | UInt16(payload[at + 1])),
                    uint32(payload, at: at + 2))
            }
            return .settings(settings, ack: ack)
        case .pushPromise:
            let (rest, padding) = try unpadded(type, flags: flags, payload)
            guard rest.count >= 4 else { throw .badFrameLength(type, length: length) }
            return .pushPromise(
                promisedStreamID: uint31(rest, at: rest.startIndex), fragment: Array(rest.dropFirst(4)),
                endHeaders: flags & HTTP2FrameFlags.endHeaders != 0, padding: padding)
        case .ping:
            guard length == 8 else { throw .badFrameLength(type, length: length) }
            let opaque = UInt64(uint32(payload, at: base)) << 32 | UInt64(uint32(payload, at: base + 4))
            return .ping(opaque: opaque, ack: flags & HTTP2FrameFlags.ack != 0)
        case .goAway:
            guard length >= 8 else { throw .badFrameLength(type, length: length) }
            return .goAway(
                lastStreamID: uint31(payload, at: base), error: HTTP2ErrorCode(rawValue: uint32(payload, at: base + 4)),
                debugData: Array(payload.dropFirst(8)))
        case .windowUpdate:
            guard length == 4 else { throw .badFrameLength(type, length: length) }
            return .windowUpdate(increment: uint31(payload, at: base))
        case .continuation:
            return .continuation(fragment: Array(payload), endHeaders: flags & HTTP2FrameFlags.endHeaders != 0)
        }
    }

    /// The payload without its padding (§6.1), and the octets the padding took (pad length
    /// octet included; 0 without PADDED).
    private static func unpadded(
        _ type: HTTP2FrameType, flags: UInt8, _ payload: ArraySlice<UInt8>
    ) throws(HTTP2ProtocolError) -> (ArraySlice<UInt8>, Int) {
        guard flags & HTTP2FrameFlags.padded != 0 else { return (payload, 0) }
        guard let padLength = payload.first.map(Int.init) else { throw .badFrameLength(type, length: 0) }
        guard padLength < payload.count else {
            throw .paddingTooLong(type, padLength: padLength, length: payload.count)
        }
        return (payload.dropFirst().dropLast(padLength), padLength + 1)
    }

    private static func priority(_ fields: ArraySlice<UInt8>) -> HTTP2Priority {
        let base = fields.startIndex
        return HTTP2Priority(
            exclusive: fields[base] & 0x80 != 0, dependency: uint31(fields, at: base), weight: fields[base + 4])
    }

    /// The big-endian 32-bit value at `index`.
    private static func uint32<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at index: Int) -> UInt32
    where Bytes.Index == Int {
        UInt32(bytes[index]) << 24 | UInt32(bytes[index + 1]) << 16 | UInt32(bytes[index + 2]) << 8
            | UInt32(bytes[index + 3])
    }

    /// The 31-bit stream identifier at `index`, its reserved high bit ignored (§4.1).
    private static func uint31<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at index: Int) -> UInt32
    where Bytes.Index == Int {
        uint32(bytes, at: index) & 0x7fff_ffff
    }
}
