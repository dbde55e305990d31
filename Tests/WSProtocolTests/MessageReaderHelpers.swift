@testable import WSProtocol

/// Test helper: feeds byte chunks to a `MessageReader` and collects what comes out.
struct CollectingReader {
    enum Output: Equatable {
        case text(String)
        case binary([UInt8])
        case ping([UInt8])
        case pong([UInt8])
        case close(ClosePayload)
    }

    var reader: MessageReader
    /// Set when the reader accepts compressed messages (permessage-deflate).
    let inflater: Inflater?

    init(role: FrameDecoder.Role = .server, limits: ProtocolLimits = .echo, inflater: Inflater? = nil) {
        reader = MessageReader(role: role, limits: limits, acceptsCompressed: inflater != nil)
        self.inflater = inflater
    }

    mutating func feed(_ bytes: some Collection<UInt8>) throws(ProtocolError) -> [Output] {
        var copy = Array(bytes)
        var outputs: [Output] = []
        var failure: ProtocolError?
        copy.withUnsafeMutableBytes { buffer in
            var offset = 0
            do throws(ProtocolError) {
                while true {
                    let event = try reader.next(in: buffer, offset: &offset, inflater: inflater)
                    switch event {
                    case .needMoreBytes: return
                    case .message(let opcode, let payload):
                        let data = reader.withBytes(of: payload, input: buffer) { Array($0) }
                        outputs.append(opcode == .text ? .text(String(decoding: data, as: UTF8.self)) : .binary(data))
                    case .ping(let payload):
                        outputs.append(.ping(reader.withBytes(of: payload, input: buffer) { Array($0) }))
                    case .pong(let payload):
                        outputs.append(.pong(reader.withBytes(of: payload, input: buffer) { Array($0) }))
                    case .close(let close): outputs.append(.close(close))
                    }
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return outputs
    }

    /// Feeds `bytes` split at `split`, then returns the outputs of both halves or the error.
    static func outputs(
        _ bytes: [UInt8], split: Int, role: FrameDecoder.Role = .server,
        limits: ProtocolLimits = .echo
    ) -> Result<[Output], ProtocolError> {
        var reader = CollectingReader(role: role, limits: limits)
        return Result { () throws(ProtocolError) in
            try reader.feed(bytes[..<split]) + reader.feed(bytes[split...])
        }
    }

    /// Feeds one byte at a time.
    static func outputsBytewise(
        _ bytes: [UInt8], role: FrameDecoder.Role = .server,
        limits: ProtocolLimits = .echo
    ) -> Result<[Output], ProtocolError> {
        var reader = CollectingReader(role: role, limits: limits)
        return Result { () throws(ProtocolError) in
            var all: [Output] = []
            for byte in bytes { all += try reader.feed([byte]) }
            return all
        }
    }
}

/// Masks `payload` into a client frame.
func clientFrame(
    _ opcode: Opcode, _ payload: [UInt8], fin: Bool = true, key: MaskingKey = MaskingKey(0x37, 0xFA, 0x21, 0x3D)
) -> [UInt8] {
    var out: [UInt8] = []
    FrameEncoder.appendFrame(opcode: opcode, fin: fin, payload: payload, maskingKey: key, to: &out)
    return out
}
