import WSProtocol

/// The JavaScript client (`clients/js/`, embedded at build time by BuildInfoPlugin) served on the
/// client listener at `/v1/client.js` and `/v1/client.d.ts` (DESIGN §12): an ETag of its content
/// hash (`If-None-Match` → 304), `Cache-Control: no-cache` so a page revalidates and picks up a
/// new hub's module at once, and CORS so a page on another origin can import it (its origin when
/// allowed origins are configured, `*` when they are not).
///
/// Invariant: an asset's ETag is the SHA-256 of the bytes served.
enum ClientAssets {
    struct Asset: Sendable {
        let body: [UInt8]
        let contentType: String
        let etag: String

        init(_ source: String, contentType: String) {
            body = Array(source.utf8)
            self.contentType = contentType
            etag = "\"" + Digest.sha256(body).prefix(16).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() + "\""
        }
    }

    static let assets: [String: Asset] = [
        "/v1/client.js": Asset(clientModuleSource, contentType: "text/javascript; charset=utf-8"),
        "/v1/client.d.ts": Asset(clientTypesSource, contentType: "application/typescript; charset=utf-8"),
        "/v1/screen-render.js": Asset(screenRenderSource, contentType: "text/javascript; charset=utf-8"),
        "/v1/screen-render.css": Asset(screenRenderStyleSource, contentType: "text/css; charset=utf-8"),
    ]

    /// The demo page (DESIGN §12): served at `/` in dev mode only, where anonymous clients may
    /// connect.
    static let demoPage = Asset(demoPageSource, contentType: "text/html; charset=utf-8")

    /// The answer for `head` if it asks for an asset (nil: not an asset path).
    static func answer(_ head: RequestHead, config: HubConfig) -> Response? {
        let path = String(head.path)
        guard let asset = path == "/" && config.dev ? demoPage : assets[path] else { return nil }
        let allowedOrigins = config.allowedOrigins
        guard !asset.body.isEmpty else {
            return .error(404, code: "not_built", message: "this hub was built without clients/ (\(path))")
        }
        var headers = CrossOrigin.headers(for: head, allowedOrigins: allowedOrigins)
        headers.append(name: "ETag", value: asset.etag)
        headers.append(name: "Cache-Control", value: "no-cache")
        if let match = head.headers["If-None-Match"], match.contains(asset.etag) {
            return Response(status: 304, headers: headers)
        }
        headers.append(name: "Content-Type", value: asset.contentType)
        return Response(status: 200, headers: headers, body: asset.body)
    }
}
