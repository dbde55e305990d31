import COpenSSL
import Foundation
import Testing
import TestSupport

@testable import PushHub

@Suite struct TLSStreamTests {
    /// The hub answers a ClientHello whose sender has already gone. OpenSSL's own socket BIO
    /// writes with write(2), so this raised SIGPIPE and ended the process (the tests' in-process
    /// hub, which does not ignore it as `pushhub` does); the write must fail with EPIPE instead.
    @Test("a TLS write to a peer that went away is EPIPE for that connection, not SIGPIPE for the process")
    func writeToAGonePeer() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UInt32.random(in: 0...UInt32.max))").path
        defer { try? FileManager.default.removeItem(atPath: directory) }  // the test's scratch files
        let (certificate, key) = try SelfSignedCertificate.make(in: directory)
        let context = try TLSContext(certificate: certificate, key: key)
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[1]) }

        // A client writes its ClientHello into the pair, then goes away.
        let clientContext = try #require(SSL_CTX_new(TLS_client_method()))
        defer { SSL_CTX_free(clientContext) }
        let client = try #require(SSL_new(clientContext))
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        #expect(SSL_set_fd(client, fds[0]) == 1)
        #expect(SSL_get_error(client, SSL_connect(client)) == SSL_ERROR_WANT_READ)
        SSL_free(client)
        close(fds[0])

        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        let stream = try TLSStream(context: context, fd: fds[1])
        var buffer = [UInt8](repeating: 0, count: 1024)
        // The read takes the ClientHello and writes the ServerHello to nobody.
        #expect {
            _ = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
        } throws: { error in
            (error as? SystemError)?.errno == EPIPE
        }
    }
}
