import WSProtocol

/// CORS for what the client listener serves over plain HTTP (the client module, screen
/// fetches), so a page on another origin can use them: every origin when no allowed origins are
/// configured, else only those (echoed, with `Vary: Origin`). No credentials are involved — the
/// hub uses no cookies — so a token travels in `Authorization`, which a preflight must allow.
enum CrossOrigin {
    /// The headers that let `head`'s origin read the answer (none for a refused origin).
    static func headers(for head: RequestHead, allowedOrigins: [String]) -> HeaderFields {
        var headers = HeaderFields()
        if allowedOrigins.isEmpty {
            headers.append(name: "Access-Control-Allow-Origin", value: "*")
        } else if let origin = head.headers["Origin"], UpgradeAdmission.isAllowed(origin, allowedOrigins) {
            headers.append(name: "Access-Control-Allow-Origin", value: origin)
            headers.append(name: "Vary", value: "Origin")
        }
        return headers
    }

    /// The answer to an `OPTIONS` preflight for a GET with a token and a cached hash.
    static func preflight(_ head: RequestHead, allowedOrigins: [String]) -> Response {
        var headers = headers(for: head, allowedOrigins: allowedOrigins)
        headers.append(name: "Access-Control-Allow-Methods", value: "GET")
        headers.append(name: "Access-Control-Allow-Headers", value: "Authorization, If-None-Match")
        headers.append(name: "Access-Control-Max-Age", value: "600")
        return Response(status: 204, headers: headers)
    }
}
