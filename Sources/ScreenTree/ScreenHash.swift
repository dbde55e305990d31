/// DESIGN §4: the hash of a rendered tree is lowercase hex SHA-256 of its RFC 8785 form, so any
/// client can recompute it.
public enum ScreenHash {
    public static func of(canonical bytes: [UInt8]) -> String { Hex.lowercase(Digest.sha256(bytes)) }

    public static func of(_ tree: JSONValue) -> String { of(canonical: JSONWriter.write(tree)) }
}
