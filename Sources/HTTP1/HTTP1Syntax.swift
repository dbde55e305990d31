import Portable

/// The byte classes of HTTP/1.1 messages (RFC 9110 §5.5, §5.6.2) the request writer and the
/// response parser check against.
enum HTTP1Syntax {
    /// field-vchar, SP or HTAB (RFC 9110 §5.5): visible ASCII and obs-text; no control
    /// character (NUL, CR, LF, DEL, …) but HTAB.
    static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == 0x09 || (0x20...0x7E).contains(byte) || byte >= 0x80
    }

    /// A method or a field name (RFC 9110 §5.6.2, `HTTPToken`).
    static func isToken(_ bytes: some Collection<UInt8>) -> Bool {
        !bytes.isEmpty && bytes.allSatisfy(HTTPToken.isTokenByte)
    }
}
