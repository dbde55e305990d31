import COpenSSL

extension JWTKey {
    /// The key in the PEM file at `path` (`--jwt-public-key FILE`): a `PUBLIC KEY`, an `RSA PUBLIC
    /// KEY` or a `CERTIFICATE` (its subject's key; the certificate itself is not checked: the
    /// operator chose this file). It has no kid: tried for every token of its algorithm.
    public convenience init(publicKeyFile path: String) throws(JWTKeyError) {
        let bytes: [UInt8]
        do {
            bytes = try PEMPrivateKey.readCredentialFile(path)
        } catch {
            guard case .unreadable(_, let reason) = error else { throw .unreadable(path: path, reason: "\(error)") }
            throw .unreadable(path: path, reason: reason)
        }
        try self.init(publicKeyPEM: bytes, source: path)
    }

    /// The key in `pem`; `source` names where it came from in errors.
    public convenience init(publicKeyPEM pem: [UInt8], source: String) throws(JWTKeyError) {
        let text = String(decoding: pem, as: UTF8.self)
        // A private key decodes as a public one too (its public half): refused, so that a leaked
        // secret is not quietly deployed next to the hub.
        if text.contains("PRIVATE KEY-----") { throw .privateKey(source: source) }
        _ = pushhub_drain_errors()
        let loaded = pem.withUnsafeBytes { bytes in
            text.contains("-----BEGIN CERTIFICATE-----")
                ? pushhub_read_certificate_key(bytes.baseAddress, Int32(bytes.count))
                : pushhub_read_public_key(bytes.baseAddress, Int32(bytes.count))
        }
        guard let loaded else {
            let reason = String(cString: pushhub_drain_errors())
            throw .notAPublicKey(source: source, reason: reason.isEmpty ? "no PEM public key block" : reason)
        }
        try self.init(taking: loaded, kid: nil, source: source)
    }
}
