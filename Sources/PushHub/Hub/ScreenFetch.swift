import WSProtocol

/// Plain HTTP on the client listener: the client module (`ClientAssets`) and
/// `GET /v1/screens/{name}` (DESIGN §12 "HTTP fetch"): the tree a client
/// would receive — its variants and its app version's capability filter — for widgets and
/// background refresh that cannot hold a socket. Identified like a session (a token as
/// `Authorization: Bearer` or `?token=`, or `?device=` where anonymous clients are allowed), with
/// `?platform=`, `?app_version=` and `?components=Carousel:2,Text:1` (what it renders, DESIGN §16,
/// as `hello.components` says over the socket). Answered with `ETag: "<hash>"` and `Cache-Control: no-cache`;
/// `If-None-Match` with the current hash is a 304 without a body.
extension Shard {
    static let fetchPrefix = "/v1/screens/"

    /// The answer to a plain HTTP request on the client listener, or nil when it is not one this
    /// serves (then it is treated as an upgrade request and refused as such).
    func answerHTTP(_ head: RequestHead) -> Response? {
        guard !head.headers.containsToken("websocket", in: "Upgrade") else { return nil }
        if head.method == "GET", let asset = ClientAssets.answer(head, config: loop.config) {
            return asset
        }
        guard head.path.hasPrefix(Self.fetchPrefix) else { return nil }
        let allowedOrigins = loop.config.allowedOrigins
        if head.method == "OPTIONS" { return CrossOrigin.preflight(head, allowedOrigins: allowedOrigins) }
        guard head.method == "GET" else {
            var refusal = Response.error(405, code: "method_not_allowed", message: "\(head.path) accepts GET")
            refusal.headers.append(name: "Allow", value: "GET, OPTIONS")
            return refusal
        }
        let name = RequestHead.percentDecoded(head.path.dropFirst(Self.fetchPrefix.count))
        var response = fetch(name, head)
        response.headers.append(name: "Cache-Control", value: "no-cache")
        for field in CrossOrigin.headers(for: head, allowedOrigins: allowedOrigins) {
            response.headers.append(name: field.name, value: field.value)
        }
        return response
    }

    private func fetch(_ name: String, _ head: RequestHead) -> Response {
        let query = head.query
        func value(_ field: String) -> String? { query.first { $0.name == field }?.value }
        var token = value("token")
        if let authorization = head.headers["Authorization"], authorization.hasPrefix("Bearer ") {
            token = String(authorization.dropFirst("Bearer ".count))
        }
        let device = value("device") ?? ""
        let now = WallClock.nowMilliseconds()
        let identity: ClientIdentity
        do {
            identity = try ClientIdentity.resolve(
                token: token, device: device, settings: settings, nowSeconds: now / 1000, mayWaitForKey: true)
        } catch .awaitingKey(let kid) {
            // A fetch cannot wait as a hello does: it asks for the keys and says when to retry;
            // a kid still unknown after they came is refused as any bad token.
            guard mayRetryForKey(kid, now: MonotonicClock.now()) else {
                return Self.unauthorized(JWTError.unknownKey(kid: kid).description)
            }
            var refusal = Response.error(
                503, code: "key_unknown_yet",
                message: "no key with kid \(kid) yet; the hub is fetching its identity provider's keys, retry shortly")
            refusal.headers.append(name: "Retry-After", value: "2")
            return refusal
        } catch {
            return Self.unauthorized(error.message)
        }
        var appVersion: SemanticVersion?
        if let text = value("app_version") {
            guard let version = SemanticVersion(text) else {
                return .error(400, code: "bad_app_version", message: "app_version \"\(text)\" is not a semantic version")
            }
            appVersion = version
        }
        var declared: DeclaredComponents?
        if let text = value("components") {
            do {
                declared = try DeclaredComponents(query: text)
            } catch {
                return .error(400, code: error.code, message: error.message)
            }
        }
        let view = self.view
        let client = ClientAttributes(
            session: "fetch", user: identity.user, device: device, platform: value("platform"), appVersion: appVersion,
            claimCohorts: identity.claimCohorts, claims: identity.claims, connectedAt: now, components: declared)
        // A release's candidate for a unit it exposes, as over the socket (DESIGN §15).
        guard let current = view.current(name, for: client) else {
            return .error(404, code: "unknown_screen", message: "no screen named \(name)")
        }
        let target = view.renderTarget(
            for: client, on: name, capabilities: cache.capabilities(of: client, view: view)
        ) { experiment, outcome, unit in
            if experiment.sticky, let variant = outcome.variant, outcome.reason != "sticky",
                experiment.overrides[unit] == nil
            {
                recordSticky(experiment: experiment.key, unit: unit, variant: variant)
            }
        }
        let rendered = cache.rendered(current, for: target)
        let tag = "\"" + ScreenFetchTag.of(hash: rendered.hash, variants: target.variants) + "\""
        var headers = HeaderFields()
        headers.append(name: "ETag", value: tag)
        if let match = head.headers["If-None-Match"],
            match.split(separator: ",").contains(where: { $0.trimmingHTTPWhitespace() == tag })
        {
            return Response(status: 304, headers: headers)
        }
        headers.append(name: "Content-Type", value: "application/json")
        var body = Array(#"{"screen":"#.utf8)
        JSONWriter.writeString(name, to: &body)
        body += Array(#","version":\#(current.version),"hash":"\#(rendered.hash)","#.utf8)
        if !target.variants.isEmpty {
            body += Array(#""variants":"#.utf8) + JSONWriter.write(.object(target.variants)) + [UInt8(ascii: ",")]
        }
        body += Array(#""tree":"#.utf8) + rendered.canonical
        body.append(UInt8(ascii: "}"))
        return Response(status: 200, headers: headers, body: body)
    }

    /// A 401 that says why, and that a bearer token is what is wanted.
    private static func unauthorized(_ message: String) -> Response {
        var refusal = Response.error(401, code: "unauthorized", message: message)
        refusal.headers.append(name: "WWW-Authenticate", value: "Bearer")
        return refusal
    }
}
