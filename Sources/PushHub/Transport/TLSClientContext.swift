import COpenSSL

/// A TLS client context, for the hub's own connections out (`rediss://`, DESIGN §11): TLS 1.2+,
/// the peer's certificate verified against a CA file (`--redis-ca`) or the system's CAs, and its
/// name or IP address checked (`TLSStream(client:…)`).
///
/// Invariant (why `@unchecked Sendable` holds): the `SSL_CTX` is configured in `init` and never
/// changed after.
public final class TLSClientContext: @unchecked Sendable, CustomStringConvertible {
    let context: OpaquePointer
    /// The CA file the peer's certificate must chain to (nil: the system's).
    public let caFile: String?

    public init(caFile: String?) throws(TLSError) {
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
        self.context = context
        self.caFile = caFile
    }

    deinit { SSL_CTX_free(context) }

    public var description: String { caFile.map { "CA \($0)" } ?? "the system's CAs" }
}
