/// CRC-32 (IEEE 802.3, the zlib/PNG polynomial 0xEDB88320), the checksum of journal records.
public enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = update(crc, byte) }
        return crc ^ 0xFFFF_FFFF
    }

    /// The length of the shortest non-empty prefix of `bytes` whose checksum is `checksum`, if any
    /// (one pass: the running CRC of each prefix is compared as it grows).
    static func shortestPrefix(of bytes: some Sequence<UInt8>, withChecksum checksum: UInt32) -> Int? {
        var crc: UInt32 = 0xFFFF_FFFF
        var length = 0
        for byte in bytes {
            crc = update(crc, byte)
            length += 1
            if crc ^ 0xFFFF_FFFF == checksum { return length }
        }
        return nil
    }

    private static func update(_ crc: UInt32, _ byte: UInt8) -> UInt32 {
        table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
    }
}
