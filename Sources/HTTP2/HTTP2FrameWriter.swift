/// Writes frames (RFC 9113 §4.1) onto the end of an output buffer. It writes what it is given;
/// keeping frames within the peer's SETTINGS_MAX_FRAME_SIZE is the caller's rule, except for
/// field blocks, which `writeFieldBlock` splits into HEADERS and CONTINUATION frames itself.
public enum HTTP2FrameWriter {
    /// Appends `frame`, padding included (zeros) when `padding` > 0.
    public static func write(_ frame: HTTP2Frame, into out: inout [UInt8]) {
        let id = frame.streamID
        switch frame.payload {
        case .data(let body, let endStream, let padding):
            let flags = (endStream ? HTTP2FrameFlags.endStream : 0) | (padding > 0 ? HTTP2FrameFlags.padded : 0)
            writeHeader(length: body.count + padding, type: .data, flags: flags, streamID: id, into: &out)
            writePadded(padding, into: &out) { $0.append(contentsOf: body) }
        case .headers(let fragment, let endStream, let endHeaders, let priority, let padding):
            var flags = endStream ? HTTP2FrameFlags.endStream : 0
            if endHeaders { flags |= HTTP2FrameFlags.endHeaders }
            if padding > 0 { flags |= HTTP2FrameFlags.padded }
            if priority != nil { flags |= HTTP2FrameFlags.priority }
            let length = fragment.count + padding + (priority == nil ? 0 : 5)
            writeHeader(length: length, type: .headers, flags: flags, streamID: id, into: &out)
            writePadded(padding, into: &out) { out in
                if let priority { writePriority(priority, into: &out) }
                out.append(contentsOf: fragment)
            }
        case .priority(let priority):
            writeHeader(length: 5, type: .priority, flags: 0, streamID: id, into: &out)
            writePriority(priority, into: &out)
        case .rstStream(let code):
            writeHeader(length: 4, type: .rstStream, flags: 0, streamID: id, into: &out)
            writeUInt32(code.rawValue, into: &out)
        case .settings(let settings, let ack):
            writeHeader(
                length: settings.count * 6, type: .settings, flags: ack ? HTTP2FrameFlags.ack : 0, streamID: id,
                into: &out)
            for setting in settings {
                out.append(UInt8(setting.identifier.rawValue >> 8))
                out.append(UInt8(truncatingIfNeeded: setting.identifier.rawValue))
                writeUInt32(setting.value, into: &out)
            }
        case .pushPromise(let promised, let fragment, let endHeaders, let padding):
            let flags = (endHeaders ? HTTP2FrameFlags.endHeaders : 0) | (padding > 0 ? HTTP2FrameFlags.padded : 0)
            writeHeader(
                length: 4 + fragment.count + padding, type: .pushPromise, flags: flags, streamID: id, into: &out)
            writePadded(padding, into: &out) { out in
                writeUInt32(promised & 0x7fff_ffff, into: &out)
                out.append(contentsOf: fragment)
            }
        case .ping(let opaque, let ack):
            writeHeader(length: 8, type: .ping, flags: ack ? HTTP2FrameFlags.ack : 0, streamID: id, into: &out)
            writeUInt32(UInt32(opaque >> 32), into: &out)
            writeUInt32(UInt32(truncatingIfNeeded: opaque), into: &out)
        case .goAway(let lastStreamID, let error, let debugData):
            writeHeader(length: 8 + debugData.count, type: .goAway, flags: 0, streamID: id, into: &out)
            writeUInt32(lastStreamID & 0x7fff_ffff, into: &out)
            writeUInt32(error.rawValue, into: &out)
            out.append(contentsOf: debugData)
        case .windowUpdate(let increment):
            writeHeader(length: 4, type: .windowUpdate, flags: 0, streamID: id, into: &out)
            writeUInt32(increment & 0x7fff_ffff, into: &out)
        case .continuation(let fragment, let endHeaders):
            writeHeader(
                length: fragment.count, type: .continuation, flags: endHeaders ? HTTP2FrameFlags.endHeaders : 0,
                streamID: id, into: &out)
            out.append(contentsOf: fragment)
        case .unknown(let type, let flags, let length):
            writeHeader(length: length, typeCode: type, flags: flags, streamID: id, into: &out)
            out.append(contentsOf: repeatElement(0, count: length))
        }
    }

    /// Appends a field block as one HEADERS frame and as many CONTINUATION frames as
    /// `maxFrameSize` needs (§6.10); END_STREAM goes on the HEADERS frame (§8.1).
    public static func writeFieldBlock(
        _ block: [UInt8], streamID: UInt32, endStream: Bool, maxFrameSize: Int, into out: inout [UInt8]
    ) {
        var offset = min(block.count, maxFrameSize)
        var flags = endStream ? HTTP2FrameFlags.endStream : 0
        if offset == block.count { flags |= HTTP2FrameFlags.endHeaders }
        writeHeader(length: offset, type: .headers, flags: flags, streamID: streamID, into: &out)
        out.append(contentsOf: block[0..<offset])
        while offset < block.count {
            let end = min(block.count, offset + maxFrameSize)
            let flags = end == block.count ? HTTP2FrameFlags.endHeaders : 0
            writeHeader(length: end - offset, type: .continuation, flags: flags, streamID: streamID, into: &out)
            out.append(contentsOf: block[offset..<end])
            offset = end
        }
    }

    /// Appends one DATA frame of `body` (no padding) — a slice, so a request body is not copied
    /// into frames first.
    public static func writeData(_ body: ArraySlice<UInt8>, streamID: UInt32, endStream: Bool, into out: inout [UInt8])
    {
        writeHeader(
            length: body.count, type: .data, flags: endStream ? HTTP2FrameFlags.endStream : 0, streamID: streamID,
            into: &out)
        out.append(contentsOf: body)
    }

    private static func writeHeader(
        length: Int, type: HTTP2FrameType, flags: UInt8, streamID: UInt32, into out: inout [UInt8]
    ) {
        writeHeader(length: length, typeCode: type.rawValue, flags: flags, streamID: streamID, into: &out)
    }

    private static func writeHeader(
        length: Int, typeCode: UInt8, flags: UInt8, streamID: UInt32, into out: inout [UInt8]
    ) {
        precondition(length < 1 << 24, "a frame's length fits in 24 bits")
        out.append(UInt8(length >> 16))
        out.append(UInt8(truncatingIfNeeded: length >> 8))
        out.append(UInt8(truncatingIfNeeded: length))
        out.append(typeCode)
        out.append(flags)
        writeUInt32(streamID & 0x7fff_ffff, into: &out)
    }

    /// The pad length octet, what `body` writes, then the padding (§6.1); just `body` when
    /// `padding` is 0. `padding` counts the pad length octet.
    private static func writePadded(_ padding: Int, into out: inout [UInt8], _ body: (inout [UInt8]) -> Void) {
        guard padding > 0 else { return body(&out) }
        precondition(padding <= 256, "padding is a pad length octet and at most 255 octets")
        out.append(UInt8(padding - 1))
        body(&out)
        out.append(contentsOf: repeatElement(0, count: padding - 1))
    }

    private static func writePriority(_ priority: HTTP2Priority, into out: inout [UInt8]) {
        writeUInt32(priority.dependency & 0x7fff_ffff | (priority.exclusive ? 0x8000_0000 : 0), into: &out)
        out.append(priority.weight)
    }

    private static func writeUInt32(_ value: UInt32, into out: inout [UInt8]) {
        out.append(UInt8(value >> 24))
        out.append(UInt8(truncatingIfNeeded: value >> 16))
        out.append(UInt8(truncatingIfNeeded: value >> 8))
        out.append(UInt8(truncatingIfNeeded: value))
    }
}
