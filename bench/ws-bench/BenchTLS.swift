import COpenSSL
import Foundation
import Glibc
import PushHub
import TestSupport

/// TLS for the load generator (`ws-bench --tls on`): a certificate made with `openssl req` for
/// the hub, one client context that does not verify it (the bench's own), an `SSL` per
/// connection whose handshake runs blocking before the socket turns non-blocking.
enum BenchTLS {
    nonisolated(unsafe) static let context: OpaquePointer = {
        let context = SSL_CTX_new(TLS_client_method())!
        SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        return context
    }()

    /// A self-signed certificate and key for the bench hub: (`--tls-cert`, `--tls-key`) flags.
    static func hubFlags() throws -> [String] {
        let (certificate, key) = try SelfSignedCertificate.make(
            in: NSTemporaryDirectory() + "pushhub-bench-tls-\(UUID().uuidString)")
        return ["--tls-cert", certificate, "--tls-key", key]
    }

    /// The TLS handshake on a blocking, connected `fd`.
    static func connect(_ fd: Int32) throws -> OpaquePointer {
        guard let ssl = SSL_new(context), pushhub_ssl_set_socket(ssl, fd) == 1 else { throw BenchError("SSL_new failed") }
        guard SSL_connect(ssl) == 1 else {
            SSL_free(ssl)
            throw BenchError("TLS handshake failed")
        }
        return ssl
    }
}

/// A load-generator connection: the socket, and TLS over it when the bench runs with TLS.
struct Link {
    let fd: Int32
    let ssl: OpaquePointer?

    /// Writes every byte (retrying while a non-blocking socket is full).
    func writeAll(_ bytes: [UInt8]) throws {
        guard let ssl else { return try RawConnection.writeAll(fd, bytes) }
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + sent, Int32($0.count - sent)) }
            if n > 0 {
                sent += Int(n)
                continue
            }
            let error = SSL_get_error(ssl, n)
            guard error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ else { throw BenchError("SSL_write failed") }
        }
    }

    /// Reads what is there: the byte count, 0 at end of stream, -1 when nothing is ready.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let ssl else {
            let n = recv(fd, buffer.baseAddress, buffer.count, 0)
            return n < 0 ? -1 : n
        }
        let n = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
        if n > 0 { return Int(n) }
        let error = SSL_get_error(ssl, n)
        return error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE ? -1 : 0
    }

    /// Whether TLS holds decrypted bytes a read has not taken.
    var hasBufferedInput: Bool { ssl.map { SSL_pending($0) > 0 } ?? false }
}
