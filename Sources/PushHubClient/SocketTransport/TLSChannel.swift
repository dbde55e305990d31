// Linux only, like the rest of SocketTransport/: Apple's platforms use URLSessionTransport.
#if PUSHHUB_SOCKET_TRANSPORT
    import COpenSSL
    import Foundation
    import Sockets

    /// Whom a client trusts for TLS: the system's certificate authorities, the CA (or self-signed
    /// certificate) in a PEM file (`--cacert FILE`), or — for development certificates, and only when
    /// asked for by name (`--insecure`) — no check at all.
    public enum TLSTrust: Sendable, Equatable {
        case system
        case caFile(String)
        case insecure
    }

    /// A byte stream a tool's client reads and writes: a plain socket, or TLS over one.
    public protocol ByteChannel: AnyObject {
        func write(_ bytes: [UInt8]) throws
        /// At least one byte; empty at end of stream.
        func read(max: Int) throws -> [UInt8]
        /// How long a read waits before failing.
        func setTimeout(_ timeout: Duration)
        /// Ends both directions: a read blocked in another thread returns.
        func shutdown()
    }

    extension BlockingSocket: ByteChannel {}

    /// A failed TLS connection, with what to do about it.
    public struct TLSClientError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// TLS over a connected socket, client side: SNI and the server's name checked against its
    /// certificate (`TLSTrust`), TLS 1.2+, ALPN `http/1.1`. One thread may read while another writes:
    /// every OpenSSL call holds `lock` (an `SSL` is not safe for concurrent use), and waiting for the
    /// socket happens outside it, in `poll`, on a non-blocking descriptor.
    ///
    /// Invariant (why `@unchecked Sendable` holds): `ssl` is touched only under `lock`; `ssl`,
    /// `context` and `socket` (which owns the descriptor) live as long as this object.
    public final class TLSChannel: ByteChannel, @unchecked Sendable {
        private let socket: BlockingSocket
        private let context: OpaquePointer
        private let ssl: OpaquePointer
        private let lock = NSLock()
        private let timeoutMilliseconds = Locked<Int32>(10_000)
        /// The protocol the server chose by ALPN (nil: none).
        public private(set) var negotiatedProtocol: String?

        /// Runs the handshake over `socket` (connected) for `serverName` (a host name or an IP
        /// literal), within `timeout`.
        public init(over socket: BlockingSocket, serverName: String, trust: TLSTrust, timeout: Duration = .seconds(10))
            throws(TLSClientError)
        {
            self.socket = socket
            ERR_clear_error()
            guard let context = SSL_CTX_new(TLS_client_method()) else { throw Self.failure("SSL_CTX_new") }
            self.context = context
            _ = pushhub_ctx_min_tls12(context)
            switch trust {
            case .system:
                SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
                _ = SSL_CTX_set_default_verify_paths(context)
            case .caFile(let path):
                SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
                guard SSL_CTX_load_verify_locations(context, path, nil) == 1 else {
                    SSL_CTX_free(context)
                    throw Self.failure("cannot read the CA file \(path) (PEM)")
                }
            case .insecure:
                SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            }
            // After the context is set up: an SSL copies its verify mode and paths when created.
            guard let ssl = SSL_new(context) else {
                SSL_CTX_free(context)
                throw Self.failure("SSL_new")
            }
            self.ssl = ssl
            setTimeout(timeout)
            let alpn: [UInt8] = [8] + Array("http/1.1".utf8)
            _ = SSL_set_alpn_protos(ssl, alpn, UInt32(alpn.count))
            let name = serverName.hasPrefix("[") ? String(serverName.dropFirst().dropLast()) : serverName
            guard pushhub_ssl_expect_peer(ssl, name) == 1 else { throw Self.failure("checking the name \(name)") }
            let fd = socket.descriptor
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            guard pushhub_ssl_set_socket(ssl, fd) == 1 else { throw Self.failure("pushhub_ssl_set_socket") }
            do {
                _ = try perform("TLS handshake with \(serverName)") { SSL_connect(ssl) }
            } catch {
                let verify = SSL_get_verify_result(ssl)
                if verify != X509_V_OK {
                    let reason = String(cString: X509_verify_cert_error_string(verify))
                    throw TLSClientError(
                        description:
                            "the certificate of \(serverName) is not trusted: \(reason) (for a private CA or a self-signed certificate pass --cacert FILE; --insecure skips the check, for development only)"
                    )
                }
                throw TLSClientError(description: "\(error)")
            }
            var data: UnsafePointer<UInt8>?
            var length: UInt32 = 0
            SSL_get0_alpn_selected(ssl, &data, &length)
            if let data, length > 0 {
                negotiatedProtocol = String(
                    decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
            }
        }

        /// A channel connected to `address`: the socket itself, or TLS over it when `tls` is given.
        public static func open(
            to address: SocketAddress, from source: String? = nil, timeout: Duration, tls: TLSTrust?
        )
            throws -> any ByteChannel
        {
            let socket = try BlockingSocket(connectingTo: address, from: source, timeout: timeout)
            guard let tls else { return socket }
            return try TLSChannel(over: socket, serverName: address.host, trust: tls, timeout: timeout)
        }

        deinit {
            SSL_free(ssl)
            SSL_CTX_free(context)
        }

        public func setTimeout(_ timeout: Duration) {
            timeoutMilliseconds.withLock { $0 = Int32(clamping: timeout.nanoseconds / 1_000_000) }
        }

        public func write(_ bytes: [UInt8]) throws {
            var sent = 0
            while sent < bytes.count {
                sent += try bytes.withUnsafeBytes { buffer in
                    try perform("TLS write") {
                        SSL_write(ssl, buffer.baseAddress! + sent, Int32(clamping: buffer.count - sent))
                    }
                }
            }
        }

        public func read(max: Int) throws -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: max)
            let count = try buffer.withUnsafeMutableBytes { raw in
                try perform("TLS read") { SSL_read(ssl, raw.baseAddress, Int32(clamping: raw.count)) }
            }
            buffer.removeLast(max - count)
            return buffer
        }

        public func shutdown() {
            lock.withLock {
                ERR_clear_error()
                _ = SSL_shutdown(ssl)  // close_notify, best effort
                ERR_clear_error()
            }
            socket.shutdown()
        }

        /// Runs `call` under the lock until it succeeds, waiting in `poll` (outside the lock) for
        /// what OpenSSL wants; 0 is the end of the stream for reads.
        private func perform(_ what: String, _ call: () -> Int32) throws(TLSClientError) -> Int {
            while true {
                let (result, error, code) = lock.withLock { () -> (Int32, Int32, Int32) in
                    ERR_clear_error()
                    let result = call()
                    return (result, result > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl, result), errno)
                }
                switch error {
                case SSL_ERROR_NONE: return Int(result)
                case SSL_ERROR_ZERO_RETURN: return 0
                case SSL_ERROR_WANT_READ: try wait(for: Int16(POLLIN), what)
                case SSL_ERROR_WANT_WRITE: try wait(for: Int16(POLLOUT), what)
                case SSL_ERROR_SYSCALL where code == 0 || code == ECONNRESET: return 0
                default: throw Self.failure(what, errno: code)
                }
            }
        }

        private func wait(for events: Int16, _ what: String) throws(TLSClientError) {
            var descriptor = pollfd(fd: socket.descriptor, events: events, revents: 0)
            let ready = poll(&descriptor, 1, timeoutMilliseconds.withLock { $0 })
            if ready == 0 { throw TLSClientError(description: "\(what): timed out") }
            if ready < 0 && errno != EINTR {
                throw TLSClientError(description: "\(what): poll failed (errno \(errno))")
            }
        }

        private static func failure(_ what: String, errno code: Int32 = 0) -> TLSClientError {
            var reasons = String(cString: pushhub_drain_errors())
            if reasons.isEmpty { reasons = code != 0 ? String(cString: strerror(code)) : "the connection closed" }
            return TLSClientError(description: "\(what) failed: \(reasons)")
        }
    }
#endif
