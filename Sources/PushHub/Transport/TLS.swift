import COpenSSL
import Glibc

/// A TLS server context (DESIGN §9 "TLS"): a certificate chain and its key, TLS 1.2 and 1.3
/// only, ALPN `http/1.1`, a session cache and tickets for resumption. Built once per listener
/// and per reload (SIGHUP reads the files again and new connections get the new context; open
/// ones keep theirs: each `SSL` holds a reference to its `SSL_CTX`).
///
/// Invariant (why `@unchecked Sendable` holds): the `SSL_CTX` is configured in `init` and never
/// changed after; OpenSSL locks what `SSL_new` and the session cache touch.
public final class TLSContext: @unchecked Sendable, Equatable, CustomStringConvertible {
    let context: OpaquePointer
    public let certificatePath: String
    public let keyPath: String
    /// Hex SHA-256 of the leaf certificate (DER): what a reload log names.
    public let fingerprint: String

    /// Loads and checks the chain and the key; the error says which file and what OpenSSL found.
    public init(certificate: String, key: String) throws(TLSError) {
        context = try Self.makeContext(certificate: certificate, key: key)
        certificatePath = certificate
        keyPath = key
        fingerprint = Self.fingerprint(context)
    }

    deinit { SSL_CTX_free(context) }

    /// A configured `SSL_CTX`, or an error with nothing left allocated (a throwing `init` never
    /// reaches `deinit`: the fuzzer found the context of a refused `--tls-cert` leaked).
    private static func makeContext(certificate: String, key: String) throws(TLSError) -> OpaquePointer {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw TLSError.openSSL("SSL_CTX_new") }
        do throws(TLSError) {
            try configure(context, certificate: certificate, key: key)
            return context
        } catch {
            SSL_CTX_free(context)
            throw error
        }
    }

    private static func configure(_ context: OpaquePointer, certificate: String, key: String) throws(TLSError) {
        guard pushhub_ctx_min_tls12(context) == 1 else { throw TLSError.openSSL("TLS 1.2 minimum") }
        guard SSL_CTX_use_certificate_chain_file(context, certificate) == 1 else {
            throw TLSError.openSSL("certificate \(certificate) (a PEM chain, leaf first)")
        }
        guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1 else {
            let reasons = TLSError.drainErrors()
            if reasons.contains("values mismatch") {
                throw TLSError(description: "key \(key) does not match certificate \(certificate) (\(reasons))")
            }
            throw TLSError(description: "key \(key) (PEM): \(reasons)")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw TLSError.openSSL("key \(key) does not match certificate \(certificate)")
        }
        pushhub_ctx_alpn_http11(context)
        pushhub_ctx_session_cache(context, 20_480)
        let sessionContext = Array("pushhub".utf8)
        _ = SSL_CTX_set_session_id_context(context, sessionContext, UInt32(sessionContext.count))
    }

    private static func fingerprint(_ context: OpaquePointer) -> String {
        guard let certificate = SSL_CTX_get0_certificate(context) else { return "" }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, EVP_sha256(), &digest, &length) == 1 else { return "" }
        return digest.prefix(Int(length)).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    public var description: String { "\(certificatePath) (sha256 \(fingerprint.prefix(16))…)" }

    /// Same files and the same certificate: a reload that changes nothing.
    public static func == (a: TLSContext, b: TLSContext) -> Bool {
        a.certificatePath == b.certificatePath && a.keyPath == b.keyPath && a.fingerprint == b.fingerprint
    }
}

/// A TLS failure, with OpenSSL's own reasons.
public struct TLSError: Error, CustomStringConvertible, Sendable {
    public var description: String

    /// `what` failed; OpenSSL's error queue (drained) says why.
    static func openSSL(_ what: String) -> TLSError { TLSError(description: "\(what): \(drainErrors())") }

    /// The reasons OpenSSL queued on this thread, oldest first; the queue is left empty.
    static func drainErrors() -> String {
        let reasons = String(cString: pushhub_drain_errors())
        return reasons.isEmpty ? "no reason given" : reasons
    }
}

/// One connection's TLS, server side, on a non-blocking socket: the handshake runs inside the
/// first reads (and writes); `SSL_ERROR_WANT_READ`/`WANT_WRITE` become `.wouldBlock` with a note
/// of which readiness the call waits for, so the connection asks epoll for it.
///
/// Invariant: owned by one connection on one loop thread; `ssl` is freed once, in deinit.
final class TLSStream {
    private let ssl: OpaquePointer
    /// A read stopped because TLS must write first (a handshake message the socket did not
    /// take): retry the read when the socket is writable.
    var readWaitsForWritable = false
    /// A write stopped because TLS must read first: retry the write when the socket is readable.
    var writeWaitsForReadable = false
    private var sentCloseNotify = false
    /// Whether the first byte from the peer was seen to open a TLS handshake record.
    var sawHandshakeRecord = false
    /// Server side: a TLS 1.3 session ticket is still to be issued, just before the first bytes
    /// we write (issue 24, item 1). OpenSSL sends two tickets the moment the client's Finished
    /// arrives, which is exactly when a client writes its first request. A client that reads on
    /// one thread and writes on another through one TLS object — Python `websockets`' sync
    /// client, python-socketio's, any client that shares an `SSLSocket` between a reader thread
    /// and its caller; OpenSSL objects are not safe for that — then processes the tickets on its
    /// reader thread while its writer thread sends the upgrade request, and 2–5 % of requests
    /// never leave the client (strace: the hub sent the tickets, then read nothing until the
    /// client gave up). Issued before our first write instead, the ticket reaches the client
    /// ahead of our answer, while its writer thread waits for that answer: nothing races.
    /// Resumption is unchanged (the ticket still arrives before anything else the client reads).
    private var ticketDue: Bool

    /// A TLS connection begins with a handshake record (content type 22); an HTTP request
    /// begins with its method's letters.
    static func startsPlainHTTP(_ firstByte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(firstByte)
    }

    init(context: TLSContext, fd: Int32) throws(TLSError) {
        ERR_clear_error()
        guard let ssl = SSL_new(context.context) else { throw TLSError.openSSL("SSL_new") }
        self.ssl = ssl
        pushhub_ssl_modes(ssl)
        guard pushhub_ssl_set_socket(ssl, fd) == 1 else { throw TLSError.openSSL("pushhub_ssl_set_socket") }
        SSL_set_accept_state(ssl)
        ticketDue = true
    }

    /// The client side of a connection the hub makes (to Redis): SNI and the certificate checked
    /// for `serverName` (a host name, or an IP literal with or without brackets).
    init(client context: TLSClientContext, fd: Int32, serverName: String) throws(TLSError) {
        ERR_clear_error()
        guard let ssl = SSL_new(context.context) else { throw TLSError.openSSL("SSL_new") }
        self.ssl = ssl
        pushhub_ssl_modes(ssl)
        ticketDue = false
        guard pushhub_ssl_set_socket(ssl, fd) == 1 else { throw TLSError.openSSL("pushhub_ssl_set_socket") }
        let name = serverName.hasPrefix("[") ? String(serverName.dropFirst().dropLast()) : serverName
        guard pushhub_ssl_expect_peer(ssl, name) == 1 else { throw TLSError.openSSL("the name to check, \(name)") }
        SSL_set_connect_state(ssl)
    }

    deinit { SSL_free(ssl) }

    /// Why the peer's certificate was refused, if it was (a client connection's handshake).
    var certificateProblem: String? {
        let result = SSL_get_verify_result(ssl)
        return result == X509_V_OK ? nil : String(cString: X509_verify_cert_error_string(result))
    }

    var isHandshakeDone: Bool { SSL_is_init_finished(ssl) == 1 }
    /// The protocol ALPN selected (RFC 7301), once the handshake is done; nil when none was.
    var selectedProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }
    /// Whether this connection resumed an earlier session (an abbreviated handshake).
    var isResumed: Bool { SSL_session_reused(ssl) == 1 }
    /// Decrypted bytes OpenSSL holds that a read has not taken yet.
    var hasBufferedInput: Bool { SSL_has_pending(ssl) == 1 }

    /// Reads plaintext into `buffer`; `.processed(0)` is the end of the stream (close_notify, or
    /// the peer closed TCP).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        ERR_clear_error()
        readWaitsForWritable = false
        let count = SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max))))
        if count > 0 { return .processed(Int(count)) }
        switch SSL_get_error(ssl, count) {
        case SSL_ERROR_WANT_READ: return .wouldBlock
        case SSL_ERROR_WANT_WRITE:
            readWaitsForWritable = true
            return .wouldBlock
        case SSL_ERROR_ZERO_RETURN: return .processed(0)
        case let error: return try endOfStreamOrFailure(error, call: "TLS read")
        }
    }

    /// Writes plaintext; a partial write returns what was taken (the rest is retried later).
    func write(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> IOResult<Int> {
        guard !bytes.isEmpty else { return .processed(0) }
        ERR_clear_error()
        if ticketDue && isHandshakeDone {
            // Queued by OpenSSL and written ahead of these bytes (TLS 1.3; a no-op under 1.2).
            ticketDue = false
            _ = SSL_new_session_ticket(ssl)
        }
        writeWaitsForReadable = false
        let count = SSL_write(ssl, bytes.baseAddress, Int32(min(bytes.count, Int(Int32.max))))
        if count > 0 { return .processed(Int(count)) }
        switch SSL_get_error(ssl, count) {
        case SSL_ERROR_WANT_WRITE: return .wouldBlock
        case SSL_ERROR_WANT_READ:
            writeWaitsForReadable = true
            return .wouldBlock
        case let error:
            _ = try endOfStreamOrFailure(error, call: "TLS write")
            throw SystemError(call: "TLS write (the peer closed)", errno: EPIPE)
        }
    }

    /// Writes the buffers in order, as `writev` would; stops at the first one not taken whole.
    func writev(_ iovecs: UnsafeBufferPointer<iovec>) throws(SystemError) -> IOResult<Int> {
        var total = 0
        for vector in iovecs where vector.iov_len > 0 {
            switch try write(UnsafeRawBufferPointer(start: vector.iov_base, count: vector.iov_len)) {
            case .wouldBlock: return total == 0 ? .wouldBlock : .processed(total)
            case .processed(let count):
                total += count
                if count < vector.iov_len { return .processed(total) }
            }
        }
        return .processed(total)
    }

    /// Sends close_notify once (best effort: a full socket drops it, as TCP's FIN follows anyway).
    func sendCloseNotify() {
        guard !sentCloseNotify, isHandshakeDone else { return }
        sentCloseNotify = true
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    private func endOfStreamOrFailure(_ error: Int32, call: String) throws(SystemError) -> IOResult<Int> {
        if error == SSL_ERROR_SYSCALL {
            let code = errno
            ERR_clear_error()
            if code == 0 { return .processed(0) }  // the peer closed TCP without close_notify
            throw SystemError(call: call, errno: code)
        }
        // SSL_ERROR_SSL: a protocol failure (not TLS at all, no shared cipher, a bad record).
        throw SystemError(call: "\(call) (\(TLSError.drainErrors()))", errno: EPROTO)
    }
}
