/// DESIGN §4: the hash of a rendered tree is lowercase hex SHA-256 of its RFC 8785 form, so any
/// client can recompute it.
public enum ScreenHash {
    public static func of(canonical bytes: [UInt8]) -> String {
        let digest = Digest.sha256(bytes)
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in digest {
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func of(_ tree: JSONValue) -> String { of(canonical: JSONWriter.write(tree)) }
}
