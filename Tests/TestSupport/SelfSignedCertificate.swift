import Foundation

/// A self-signed certificate for localhost and 127.0.0.1, made by `openssl req` (RSA 2048, two
/// days): what the TLS tests and the TLS benchmark give a hub.
public enum SelfSignedCertificate {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Writes `cert.pem` and `key.pem` in `directory` (created if missing); their paths.
    public static func make(in directory: String) throws -> (certificate: String, key: String) {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let (certificate, key) = (directory + "/cert.pem", directory + "/key.pem")
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        guard openssl.terminationStatus == 0 else {
            throw Failure(description: "openssl req exited \(openssl.terminationStatus)")
        }
        return (certificate, key)
    }
}
