import COpenSSL

/// A TLS client context, for the hub's own connections out (`rediss://`, DESIGN §11; APNs and
/// FCM, §17): TLS 1.2+, the peer's certificate verified against a CA file (`--redis-ca`) or the
/// system's CAs, its name or IP address checked (`TLSStream(client:…)`), and the protocols
/// offered by ALPN (RFC 7301), if any: `["h2"]` for HTTP/2, which RFC 9113 §3.2 requires over TLS.
///
/// Invariant (why `@unchecked Sendable` holds): the `SSL_CTX` is configured in `init` and never
/// changed after.
public final class TLSClientContext: @unchecked Sendable, CustomStringConvertible {
    let context: OpaquePointer
    /// The CA file the peer's certificate must chain to (nil: the system's).
    public let caFile: String?
    /// The protocols offered by ALPN, in order of preference (empty: no ALPN extension).
    public let alpn: [String]

    public init(caFile: String?, alpn: [String] = []) throws(TLSError) {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw TLSError.openSSL("SSL_CTX_new") }
        _ = pushhub_ctx_min_tls12(context)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if let caFile {
            guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                SSL_CTX_free(context)
                throw TLSError.openSSL("the CA file \(caFile) (PEM)")
            }
        } else {
            _ = SSL_CTX_set_default_verify_paths(context)
        }
        if !alpn.isEmpty {
            // The wire format: each name preceded by its length (RFC 7301 §3.1).
            var protocols: [UInt8] = []
            for name in alpn {
                precondition((1...255).contains(name.utf8.count), "an ALPN protocol name is 1 to 255 octets")
                protocols.append(UInt8(name.utf8.count))
                protocols.append(contentsOf: name.utf8)
            }
            // 0 is success for this one call of OpenSSL's.
            guard SSL_CTX_set_alpn_protos(context, protocols, UInt32(protocols.count)) == 0 else {
                SSL_CTX_free(context)
                throw TLSError.openSSL("ALPN \(alpn)")
            }
        }
        self.context = context
        self.caFile = caFile
        self.alpn = alpn
    }

    deinit { SSL_CTX_free(context) }

    public var description: String { caFile.map { "CA \($0)" } ?? "the system's CAs" }
}
