import HTTP2

/// A Google service account, from the JSON key file the Firebase console downloads (DESIGN §17,
/// `--fcm-credentials FILE`): the project to send for, and what the hub needs to get OAuth 2.0
/// access tokens for FCM with a JWT-bearer grant (RFC 7523).
///
/// Invariants: `projectID`, `clientEmail` and `tokenURI` are non-empty; `tokenURI` is an
/// `https://` (or, for local stand-ins, `http://`) URL whose parts are `tokenScheme`,
/// `tokenAuthority` (host[:port]) and `tokenPath`; the signer holds the account's RSA key.
public struct FCMServiceAccount: Sendable {
    /// The OAuth scope of FCM's HTTP v1 API.
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// How long an assertion is valid: Google's limit, one hour.
    public static let assertionLifetimeSeconds = 3600

    public let projectID: String
    public let clientEmail: String
    public let tokenURI: String
    /// `private_key_id`, sent as the assertion's `kid` when the file has one.
    public let privateKeyID: String?
    public let tokenScheme: String
    public let tokenAuthority: String
    public let tokenPath: String
    private let signer: JWSSigner

    /// Reads the service-account JSON at `path`.
    public init(file path: String) throws(PushCredentialError) {
        try self.init(json: PEMPrivateKey.readCredentialFile(path), source: path)
    }

    /// Parses a service-account JSON; `source` names it in errors.
    /// - Throws: `.badServiceAccount` naming the first missing or unusable field; the key's errors.
    public init(json: [UInt8], source: String) throws(PushCredentialError) {
        // try?: any parse failure is the same refusal for the operator: the file is not a JSON object.
        guard case .object(let fields)? = try? JSONReader.parse(json) else {
            throw .badServiceAccount(source: source, reason: "it is not a JSON object")
        }
        func field(_ name: String) throws(PushCredentialError) -> String {
            guard let value = fields[name]?.stringValue, !value.isEmpty else {
                throw .badServiceAccount(source: source, reason: "it has no \(name) (a non-empty string)")
            }
            return value
        }
        if let type = fields["type"]?.stringValue, type != "service_account" {
            throw .badServiceAccount(source: source, reason: "its type is \"\(type)\", not \"service_account\"")
        }
        projectID = try field("project_id")
        let privateKey = try field("private_key")
        clientEmail = try field("client_email")
        tokenURI = try field("token_uri")
        privateKeyID = fields["private_key_id"]?.stringValue
        guard let (scheme, authority, path) = Self.split(url: tokenURI) else {
            throw .badServiceAccount(
                source: source, reason: "its token_uri \(tokenURI) is not an https:// URL with a host")
        }
        (tokenScheme, tokenAuthority, tokenPath) = (scheme, authority, path)
        let key = try PEMPrivateKey(pem: Array(privateKey.utf8), source: source + " (private_key)")
        signer = try JWSSigner(key: key, algorithm: .rs256)
    }

    /// The signed assertion (RFC 7523 §3) asking for an access token at `nowSeconds`:
    /// `{"iss":client_email,"scope":…firebase.messaging,"aud":token_uri,"iat":now,"exp":now+3600}`.
    public func assertion(nowSeconds: Int) throws(PushCredentialError) -> String {
        let header: JSONObject =
            privateKeyID.map { ["kid": .string($0), "typ": .string("JWT")] } ?? ["typ": .string("JWT")]
        return try signer.sign(
            header: header,
            claims: [
                "iss": .string(clientEmail), "scope": .string(Self.scope), "aud": .string(tokenURI),
                "iat": .number(Double(nowSeconds)),
                "exp": .number(Double(nowSeconds + Self.assertionLifetimeSeconds)),
            ])
    }

    /// The form body of the token request (RFC 7523 §2.1, `application/x-www-form-urlencoded`):
    /// `grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=<jwt>` — a JWT
    /// is base64url and dots, which need no escaping.
    public func tokenRequestBody(nowSeconds: Int) throws(PushCredentialError) -> [UInt8] {
        Array(
            ("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="
                + (try assertion(nowSeconds: nowSeconds))).utf8)
    }

    /// The token request (RFC 6749 §4, RFC 7523 §2.1) for an access token at `nowSeconds`:
    /// `POST <token_uri>` with the form `tokenRequestBody`; its answer makes an `FCMAccessToken`.
    public func tokenRequest(nowSeconds: Int) throws(PushCredentialError) -> HTTP2Request {
        HTTP2Request(
            method: "POST", scheme: tokenScheme, authority: tokenAuthority, path: tokenPath,
            headers: [HeaderField("content-type", "application/x-www-form-urlencoded")],
            body: try tokenRequestBody(nowSeconds: nowSeconds))
    }

    /// An absolute http(s) URL's scheme, authority and path ("/" when empty); nil when it is not
    /// one (no scheme, no host, user info, a fragment, or bytes that cannot go in a header).
    static func split(url: String) -> (scheme: String, authority: String, path: String)? {
        let scheme: String
        if url.hasPrefix("https://") {
            scheme = "https"
        } else if url.hasPrefix("http://") {
            scheme = "http"
        } else {
            return nil
        }
        let rest = url.dropFirst(scheme.count + 3)
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        let path = rest.dropFirst(authority.count)
        guard url.isVisibleASCII, !authority.isEmpty, !authority.contains("@"), !url.contains("#") else { return nil }
        return (scheme, String(authority), path.isEmpty ? "/" : (path.hasPrefix("?") ? "/" + path : String(path)))
    }
}
