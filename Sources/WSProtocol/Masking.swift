/// The 4-byte masking key of a client frame (RFC 6455 §5.3).
///
/// Invariant: `bytes` are in wire order; byte `i` of the payload is XORed with `bytes[i % 4]`.
public struct MaskingKey: Equatable, Sendable {
    public var bytes: (UInt8, UInt8, UInt8, UInt8)

    public init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) { bytes = (b0, b1, b2, b3) }

    /// A fresh key from the system's CSPRNG, as §5.3 requires of clients.
    public static func random() -> MaskingKey {
        var rng = SystemRandomNumberGenerator()
        let value = rng.next() as UInt32
        return MaskingKey(
            UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
            UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24))
    }

    public static func == (a: MaskingKey, b: MaskingKey) -> Bool {
        a.bytes.0 == b.bytes.0 && a.bytes.1 == b.bytes.1 && a.bytes.2 == b.bytes.2 && a.bytes.3 == b.bytes.3
    }

    @inline(__always) func byte(_ index: Int) -> UInt8 {
        switch index & 3 {
        case 0: bytes.0
        case 1: bytes.1
        case 2: bytes.2
        default: bytes.3
        }
    }

    /// XORs `buffer` with the key in place, starting at key position `phase` (0...3), eight
    /// bytes at a time. Masking and unmasking are the same operation.
    /// - Returns: the key position for the byte after `buffer`, to resume the next chunk.
    @discardableResult
    public func apply(to buffer: UnsafeMutableRawBufferPointer, phase: Int) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return phase }
        let count = buffer.count
        // The key as a little-endian 8-byte word whose byte k is key[(phase + k) % 4].
        var word: UInt64 = 0
        for k in 0..<8 { word |= UInt64(byte(phase + k)) << (8 * UInt64(k)) }
        word = UInt64(littleEndian: word)
        var index = 0
        while index + 8 <= count {
            let value = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            base.storeBytes(of: value ^ word, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < count {
            let p = base.advanced(by: index).assumingMemoryBound(to: UInt8.self)
            p.pointee ^= byte(phase + index)
            index += 1
        }
        return (phase + count) & 3
    }
}
