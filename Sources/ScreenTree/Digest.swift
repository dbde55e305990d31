#if canImport(CryptoKit)
    import CryptoKit
    import Foundation  // `[UInt8]: DataProtocol`, which `SHA256.hash(data:)` takes
#else
    import COpenSSL
#endif

/// SHA-256, from the platform's own implementation: CryptoKit on Apple's platforms, OpenSSL
/// elsewhere (Linux, where the hub runs).
public enum Digest {
    #if canImport(CryptoKit)
        public static func sha256(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }
    #else
        /// From a stack context: OpenSSL 3's one-shot `SHA256()` fetches the algorithm under a
        /// process-wide lock and allocates a context on every call; the low-level calls do neither.
        public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
            var context = SHA256_CTX()
            var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
            SHA256_Init(&context)
            bytes.withUnsafeBytes { _ = SHA256_Update(&context, $0.baseAddress, $0.count) }
            SHA256_Final(&digest, &context)
            return digest
        }
    #endif
}
