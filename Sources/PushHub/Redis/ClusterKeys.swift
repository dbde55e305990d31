import COpenSSL

/// Fingerprints of the secrets a client or an operator presents to any hub of a cluster (the
/// JWT key clients' tokens are verified with, the root admin token). Hubs sharing a Redis must
/// hold the same ones, or a client's token from one hub is refused by another after a failover
/// (DESIGN §11: clients see the same behaviour on every hub). A hub publishes its fingerprints in
/// its registry entry in Redis (never in an HTTP answer); one whose fingerprints differ from a
/// live hub's refuses to start, and a running hub that meets such a hub (two started at once)
/// stops taking changes and says why.
///
/// A fingerprint is the first 16 hex digits of PBKDF2-HMAC-SHA256(secret, "pushhub/<what>",
/// 100,000 rounds): enough to tell two secrets apart, and slow to test guesses against (a
/// generated secret, 32 random bytes, cannot be guessed anyway; one an operator chose might).
struct ClusterKeys: Equatable, Sendable {
    var jwt: String
    var admin: String

    init(jwtSecret: String, adminToken: String) {
        jwt = Self.fingerprint("jwt", jwtSecret)
        admin = Self.fingerprint("admin", adminToken)
    }

    init(jwt: String, admin: String) {
        self.jwt = jwt
        self.admin = admin
    }

    /// Rounds of PBKDF2: about 40 ms once per start on this machine.
    static let rounds: Int32 = 100_000

    static func fingerprint(_ label: String, _ secret: String) -> String {
        let password = Array(secret.utf8)
        let salt = Array("pushhub/\(label)".utf8)
        var digest = [UInt8](repeating: 0, count: 8)
        let made = password.withUnsafeBufferPointer { password in
            password.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(password.count, 1)) {
                PKCS5_PBKDF2_HMAC($0, Int32(password.count), salt, Int32(salt.count), rounds, EVP_sha256(), 8, &digest)
            }
        }
        precondition(made == 1, "PBKDF2-HMAC-SHA256 with fixed arguments cannot fail")
        return digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// As a registry entry carries them.
    var json: JSONValue { .object(["jwt": .string(jwt), "admin": .string(admin)]) }

    init?(_ json: JSONValue?) {
        guard let jwt = json?["jwt"]?.stringValue, let admin = json?["admin"]?.stringValue else { return nil }
        self.init(jwt: jwt, admin: admin)
    }

    /// What differs from `other`, in words an operator acts on (nil: nothing).
    func difference(from other: ClusterKeys, hub: String) -> String? {
        var differing: [String] = []
        if jwt != other.jwt { differing.append("JWT secret (jwt.secret)") }
        if admin != other.admin { differing.append("admin token (admin.token)") }
        guard !differing.isEmpty else { return nil }
        return "this hub's \(differing.joined(separator: " and ")) differ from those of the live hub \(hub) "
            + "(fingerprints jwt \(jwt) vs \(other.jwt), admin \(admin) vs \(other.admin)); every hub sharing a "
            + "Redis must use the same secrets: copy them from a running hub's data dir"
    }
}
