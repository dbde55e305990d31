import WSProtocol

/// The console (DESIGN §13): the page and its modules from `clients/console/` (embedded at build
/// time by BuildInfoPlugin), served on the admin listener at `/console` and `/console/{file}`.
///
/// The files carry no data, so they are served without a token; every data call the page makes
/// goes to the admin API with the token the operator typed in (a Bearer header, never a URL).
/// Invariants: only the embedded files are served (the name is a key, never a path on disk); an
/// asset's ETag is the SHA-256 of its bytes; the page may load nothing from another origin
/// (`Content-Security-Policy`) and may not be framed.
struct ConsoleRoutes: AdminHandlers {
    let call: AdminCall

    init(_ call: AdminCall) { self.call = call }

    /// `GET /console` and `GET /console/{file}`.
    func file() { call.reply(Self.answer(call.head)) }

    /// The embedded files by request path; `/console` is `index.html`. The JavaScript client
    /// (`clients/js/`) is served beside them as `pushhub-client.js`: the console applies patches
    /// and computes screen hashes and buckets with the same code the apps use; and the screen
    /// renderer as `screen-render.js` with its `screen-render.css`, the ones the demo page draws with.
    static let assets: [String: ClientAssets.Asset] = {
        var assets: [String: ClientAssets.Asset] = [:]
        if consoleAssetSources.isEmpty { return assets }
        assets["/console/pushhub-client.js"] = ClientAssets.assets["/v1/client.js"]
        assets["/console/screen-render.js"] = ClientAssets.assets["/v1/screen-render.js"]
        assets["/console/screen-render.css"] = ClientAssets.assets["/v1/screen-render.css"]
        for (name, source) in consoleAssetSources {
            let asset = ClientAssets.Asset(source, contentType: contentType(of: name))
            assets["/console/" + name] = asset
            if name == "index.html" {
                assets["/console"] = asset
                assets["/console/"] = asset
            }
        }
        return assets
    }()

    /// Images are allowed from anywhere a published screen may point (the tree preview draws
    /// them); scripts, styles and requests only from the hub itself.
    static let contentSecurityPolicy =
        "default-src 'self'; img-src 'self' data: http: https:; connect-src 'self'; "
        + "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

    /// The answer to a `GET` of a console path.
    static func answer(_ head: RequestHead) -> Response {
        let path = String(head.path)
        guard let asset = assets[path] else {
            if assets.isEmpty {
                return .error(404, code: "not_built", message: "this hub was built without clients/console/")
            }
            return .error(404, code: "not_found", message: "the console has no file \(path)")
        }
        var headers = HeaderFields()
        headers.append(name: "ETag", value: asset.etag)
        headers.append(name: "Cache-Control", value: "no-cache")
        headers.append(name: "Content-Security-Policy", value: contentSecurityPolicy)
        headers.append(name: "X-Content-Type-Options", value: "nosniff")
        headers.append(name: "Referrer-Policy", value: "no-referrer")
        if let match = head.headers["If-None-Match"], match.contains(asset.etag) {
            return Response(status: 304, headers: headers)
        }
        headers.append(name: "Content-Type", value: asset.contentType)
        return Response(status: 200, headers: headers, body: asset.body)
    }

    static func contentType(of name: String) -> String {
        switch name.split(separator: ".").last ?? "" {
        case "html": "text/html; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        case "json": "application/json"
        default: "text/plain; charset=utf-8"
        }
    }
}
