import COpenSSL

/// One JSON Web Key (RFC 7517 §4) of a JWKS, read into a `JWTKey`: RSA from `n` and `e` (RFC
/// 7518 §6.3.1), EC P-256 from `x` and `y` (§6.2.1; OpenSSL refuses a point off the curve),
/// Ed25519 from `x` (RFC 8037 §2). A key meant for something else (`use` other than `sig`,
/// `key_ops` without `verify`, an `alg` the key type cannot have) is skipped; a key the hub must
/// not take (a private one, a symmetric one, another curve, a short RSA key, an invalid point)
/// is refused. Either way the caller logs the kid and the reason.
enum JWK {
    enum Outcome {
        case key(JWTKey)
        case skipped(kid: String?, reason: String)
        case refused(kid: String?, JWTKeyError)
    }

    /// Members that only a private key has (RFC 7518 §6.2.2, §6.3.2; RFC 8037 §2): a JWKS that
    /// carries one published a secret, which the hub never uses.
    static let privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    /// Reads `value`, one element of a JWKS's `keys`; `origin` names the JWKS (its URL) in errors.
    static func read(_ value: JSONValue, origin: String) -> Outcome {
        guard let members = value.objectValue else {
            return .refused(kid: nil, .invalid(source: "a key of \(origin)", reason: "it is not a JSON object"))
        }
        var kid: String?
        if let named = members["kid"] {
            guard let text = named.stringValue, JWTKeySet.isAcceptableKeyID(text) else {
                return .refused(
                    kid: nil,
                    .invalid(
                        source: "a key of \(origin)",
                        reason:
                            "its kid is not a string of 1 to \(JWTKeySet.maximumKeyIDBytes) visible ASCII characters"))
            }
            kid = text
        }
        let source = "the key" + (kid.map { " \"\($0)\"" } ?? " without kid") + " of \(origin)"
        let kty = members["kty"]?.stringValue ?? ""
        if let use = members["use"] {
            guard use.stringValue == "sig" else {
                return .skipped(kid: kid, reason: "use is \(JSONWriter.string(use)), not \"sig\"")
            }
        }
        if let operations = members["key_ops"] {
            guard operations.arrayValue?.contains(.string("verify")) == true else {
                return .skipped(
                    kid: kid, reason: "key_ops \(JSONWriter.string(operations)) does not include \"verify\"")
            }
        }
        if privateMembers.contains(where: { members[$0] != nil }) {
            return .refused(
                kid: kid,
                kty == "oct"
                    ? .unsupported(source: source, found: "a symmetric (oct) key") : .privateKey(source: source))
        }
        let expected: JWTAlgorithm
        switch kty {
        case "RSA": expected = .rs256
        case "EC": expected = .es256
        case "OKP": expected = .edDSA
        case "oct": return .refused(kid: kid, .unsupported(source: source, found: "a symmetric (oct) key"))
        default:
            return .skipped(kid: kid, reason: "kty \(JSONWriter.string(members["kty"] ?? .null)) is not RSA, EC or OKP")
        }
        if let alg = members["alg"], alg.stringValue != expected.rawValue {
            return .skipped(
                kid: kid,
                reason: "alg \(JSONWriter.string(alg)) with kty \"\(kty)\": the hub verifies \(expected) with it")
        }
        do {
            switch expected {
            case .rs256: return .key(try rsa(members, kid: kid, source: source))
            case .es256: return .key(try ecP256(members, kid: kid, source: source))
            case .edDSA: return .key(try ed25519(members, kid: kid, source: source))
            case .hs256: preconditionFailure("no JWK type maps to HS256")
            }
        } catch {
            return .refused(kid: kid, error)
        }
    }

    /// The base64url bytes of member `name` (RFC 7518 §2 Base64urlUInt and octet strings).
    private static func bytes(_ members: JSONObject, _ name: String, source: String) throws(JWTKeyError) -> [UInt8] {
        guard let text = members[name]?.stringValue, let bytes = Base64URL.decode(text), !bytes.isEmpty else {
            throw .invalid(source: source, reason: "\"\(name)\" is missing or not base64url")
        }
        return bytes
    }

    private static func rsa(_ members: JSONObject, kid: String?, source: String) throws(JWTKeyError) -> JWTKey {
        let modulus = try bytes(members, "n", source: source)
        let exponent = try bytes(members, "e", source: source)
        // Bounds that no real key exceeds, so OpenSSL never works on an absurd number.
        guard modulus.count <= 2048, exponent.count <= 8 else {
            throw .invalid(source: source, reason: "n of \(modulus.count) bytes or e of \(exponent.count) bytes")
        }
        let loaded = modulus.withUnsafeBufferPointer { n in
            exponent.withUnsafeBufferPointer { e in
                pushhub_rsa_public_key(n.baseAddress, Int32(n.count), e.baseAddress, Int32(e.count))
            }
        }
        guard let loaded else { throw .invalid(source: source, reason: "OpenSSL made no RSA key of n and e") }
        return try JWTKey(taking: loaded, kid: kid, source: source)
    }

    private static func ecP256(_ members: JSONObject, kid: String?, source: String) throws(JWTKeyError) -> JWTKey {
        try requireCurve("P-256", of: members, type: "EC", source: source)
        let x = try bytes(members, "x", count: 32, of: "a P-256 key", source: source)
        let y = try bytes(members, "y", count: 32, of: "a P-256 key", source: source)
        let loaded = x.withUnsafeBufferPointer { x in
            y.withUnsafeBufferPointer { y in pushhub_ec_p256_public_key(x.baseAddress, y.baseAddress) }
        }
        guard let loaded else { throw .invalid(source: source, reason: "the point (x, y) is not on P-256") }
        return try JWTKey(taking: loaded, kid: kid, source: source)
    }

    private static func ed25519(_ members: JSONObject, kid: String?, source: String) throws(JWTKeyError) -> JWTKey {
        try requireCurve("Ed25519", of: members, type: "OKP", source: source)
        let x = try bytes(members, "x", count: 32, of: "an Ed25519 key", source: source)
        let loaded = x.withUnsafeBufferPointer { pushhub_ed25519_public_key($0.baseAddress) }
        guard let loaded else { throw .invalid(source: source, reason: "OpenSSL made no Ed25519 key of x") }
        return try JWTKey(taking: loaded, kid: kid, source: source)
    }

    /// Refuses a key whose `crv` is not `expected` ("an EC key on curve \"P-384\"").
    private static func requireCurve(_ expected: String, of members: JSONObject, type: String, source: String)
        throws(JWTKeyError)
    {
        guard members["crv"]?.stringValue == expected else {
            throw .unsupported(
                source: source, found: "an \(type) key on curve \(JSONWriter.string(members["crv"] ?? .null))")
        }
    }

    /// Member `name` as exactly `count` bytes (RFC 7518 §6.2.1.2: a coordinate at its full size).
    private static func bytes(_ members: JSONObject, _ name: String, count: Int, of key: String, source: String)
        throws(JWTKeyError) -> [UInt8]
    {
        let value = try bytes(members, name, source: source)
        guard value.count == count else {
            throw .invalid(source: source, reason: "\(name) of \(key) is \(count) bytes, not \(value.count)")
        }
        return value
    }
}
