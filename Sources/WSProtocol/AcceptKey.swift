import COpenSSL
import Portable

/// `Sec-WebSocket-Accept` (RFC 6455 §4.2.2): base64(SHA-1(key + GUID)). The only file of
/// WSProtocol that imports COpenSSL.
public enum AcceptKey {
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The accept value for a client's `Sec-WebSocket-Key`.
    public static func compute(for key: String) -> String {
        // A context on the stack: OpenSSL 3's one-shot `SHA1()` fetches the algorithm under a
        // process-wide lock and allocates a context on every call (every upgrade).
        var context = SHA_CTX()
        var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        SHA1_Init(&context)
        var key = key
        key.withUTF8 { _ = SHA1_Update(&context, $0.baseAddress, $0.count) }
        var guid = Self.guid
        guid.withUTF8 { _ = SHA1_Update(&context, $0.baseAddress, $0.count) }
        SHA1_Final(&digest, &context)
        return Base64.standard.encode(digest)
    }

    /// Whether `key` is base64 of exactly 16 bytes, as §4.1 requires.
    public static func isValidClientKey(_ key: String) -> Bool {
        guard key.utf8.count == 24, let decoded = Base64.standard.decode(key) else { return false }
        return decoded.count == 16
    }

    /// A fresh client key: base64 of 16 random bytes.
    public static func randomClientKey() -> String {
        var rng = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
        return Base64.standard.encode(bytes)
    }
}
