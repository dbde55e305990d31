import COpenSSL
import Glibc

/// Why push credentials could not be loaded or used (DESIGN §17). Each description names the
/// file (or the answer) and what is wrong with it; none ever contains key material.
public enum PushCredentialError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be read.
    case unreadable(path: String, reason: String)
    /// The text holds no private key OpenSSL can read (`reason`: OpenSSL's).
    case notAPrivateKey(source: String, reason: String)
    /// The key is encrypted: the hub has no passphrase to give.
    case encryptedKey(source: String)
    /// The key is not of the kind this credential needs.
    case wrongKeyKind(source: String, found: String, expected: String)
    /// The service-account JSON lacks something or is not JSON.
    case badServiceAccount(source: String, reason: String)
    /// OpenSSL could not sign (it should not happen with a key that loaded).
    case signingFailed(reason: String)
    /// The OAuth token endpoint refused, or answered something that is not a token. Retrying
    /// may help when `isTransient`.
    case tokenRefused(status: Int, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
        case .notAPrivateKey(let source, let reason): "\(source) holds no PEM private key OpenSSL can read (\(reason))"
        case .encryptedKey(let source):
            "\(source) holds an encrypted private key; give the hub an unencrypted one (openssl pkcs8 -nocrypt)"
        case .wrongKeyKind(let source, let found, let expected):
            "\(source) holds \(found); this credential needs \(expected)"
        case .badServiceAccount(let source, let reason): "\(source) is not a usable service-account JSON: \(reason)"
        case .signingFailed(let reason): "signing with the push credentials failed: \(reason)"
        case .tokenRefused(let status, let reason):
            "the OAuth token endpoint answered \(status): \(reason)"
        }
    }

    /// Whether asking again later may succeed: the token endpoint was busy or failing (429,
    /// 5xx), rather than refusing these credentials.
    public var isTransient: Bool {
        guard case .tokenRefused(let status, _) = self else { return false }
        return status == 429 || status >= 500
    }
}

/// A private key read from PEM through OpenSSL: EC on P-256 (an APNs `.p8`) or RSA (a Google
/// service account's `private_key`), in PKCS#8 (`BEGIN PRIVATE KEY`) or the traditional forms
/// (`BEGIN EC PRIVATE KEY`, `BEGIN RSA PRIVATE KEY`).
///
/// Invariants: `key` is a loaded key of `kind`, owned by this object and freed with it; it is
/// never changed after `init`, which is why instances may be shared across threads (OpenSSL 3
/// signs with one key from several threads at once).
public final class PEMPrivateKey: @unchecked Sendable {
    /// What kind of key it is.
    public enum Kind: Equatable, Sendable, CustomStringConvertible {
        case ecP256
        case rsa(bits: Int)

        public var description: String {
            switch self {
            case .ecP256: "an EC P-256 key"
            case .rsa(let bits): "an RSA \(bits)-bit key"
            }
        }
    }

    public let kind: Kind
    /// Where the key came from (a path), for error messages.
    public let source: String
    private let key: OpaquePointer

    /// Reads the key in the PEM file at `path`.
    public convenience init(file path: String) throws(PushCredentialError) {
        try self.init(pem: Self.readCredentialFile(path), source: path)
    }

    /// Reads the key in `pem`; `source` names where it came from in errors.
    public init(pem: [UInt8], source: String) throws(PushCredentialError) {
        // A passphrase-protected key fails inside OpenSSL with a generic reason; say why instead.
        let text = String(decoding: pem, as: UTF8.self)
        if text.contains("BEGIN ENCRYPTED PRIVATE KEY") || text.contains("Proc-Type: 4,ENCRYPTED") {
            throw .encryptedKey(source: source)
        }
        _ = pushhub_drain_errors()
        let loaded = pem.withUnsafeBytes { pushhub_read_private_key($0.baseAddress, Int32($0.count)) }
        guard let loaded else {
            let reason = String(cString: pushhub_drain_errors())
            throw .notAPrivateKey(source: source, reason: reason.isEmpty ? "no PEM private key block" : reason)
        }
        let type = pushhub_key_type(loaded)
        let kind: Kind
        if type == pushhub_key_type_ec() {
            let curve = String(cString: pushhub_key_curve(loaded))
            guard curve == "prime256v1" else {
                EVP_PKEY_free(loaded)
                throw .wrongKeyKind(
                    source: source, found: "an EC key on curve \(curve.isEmpty ? "(unnamed)" : curve)",
                    expected: "an EC P-256 key (prime256v1) or an RSA key")
            }
            kind = .ecP256
        } else if type == pushhub_key_type_rsa() {
            kind = .rsa(bits: Int(pushhub_key_bits(loaded)))
        } else {
            EVP_PKEY_free(loaded)
            throw .wrongKeyKind(
                source: source, found: "a key of OpenSSL type \(type)", expected: "an EC P-256 key or an RSA key")
        }
        self.key = loaded
        self.kind = kind
        self.source = source
    }

    deinit { EVP_PKEY_free(key) }

    /// Signs SHA-256(`data`): an ECDSA signature in DER for an EC key, RSASSA-PKCS1-v1_5 for an
    /// RSA key (JWSSigner turns the DER into JWS's raw r‖s).
    func signSHA256(_ data: [UInt8]) throws(PushCredentialError) -> [UInt8] {
        // ECDSA P-256 DER is at most 72 bytes; RSA's signature is the modulus's size.
        var signature = [UInt8](repeating: 0, count: 1024)
        var length = signature.count
        _ = pushhub_drain_errors()
        let signed = data.withUnsafeBufferPointer { input in
            pushhub_sign_sha256(key, input.baseAddress, input.count, &signature, &length)
        }
        guard signed == 1 else { throw .signingFailed(reason: String(cString: pushhub_drain_errors())) }
        return Array(signature[..<length])
    }

    /// The bytes of a credential file (a key, a service-account JSON): a regular file of at most
    /// 1 MiB — anything else is a mistake in the configuration, not a credential.
    static func readCredentialFile(_ path: String) throws(PushCredentialError) -> [UInt8] {
        var status = stat()
        guard stat(path, &status) == 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .unreadable(path: path, reason: "not a regular file") }
        guard status.st_size <= 1 << 20 else {
            throw .unreadable(path: path, reason: "\(status.st_size) bytes; a credential file is at most 1 MiB")
        }
        do {
            guard let bytes = try FileBytes.read(path) else { throw SystemError(call: "open \(path)", errno: ENOENT) }
            return bytes
        } catch {
            throw .unreadable(path: path, reason: "\(error)")
        }
    }
}
