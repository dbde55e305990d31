import Foundation
import ScreenTree
import Portable

/// A screen fetched over HTTP (DESIGN §12), for code that cannot hold a socket.
public struct FetchedScreen: Sendable, Equatable {
    public var screen: String
    public var tree: JSONValue
    public var version: Int
    public var hash: String
    /// 200: a new tree (its hash checked, now in storage); 304: the stored tree is current.
    public var status: Int
}

/// Why a fetch failed.
public struct FetchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The hub's error code when the hub answered (its JSON body `{"error":{"code"}}`:
    /// `unauthorized`, `unknown_screen`, `bad_app_version`, …); `http_<status>` for an answer that
    /// is not the hub's (a proxy's or load balancer's 404 or 502); `mismatch`, `network`, `http`.
    /// The same strings as the JavaScript client's `FetchError.code`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String

        public init(rawValue: String) { self.rawValue = rawValue }

        /// 401 from the hub: no or bad credentials, or a device on a hub that refuses anonymous clients.
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// 404 from the hub: it has no screen of that name.
        public static let unknownScreen = Code(rawValue: "unknown_screen")
        /// The answer's tree does not hash to its hash.
        public static let mismatch = Code(rawValue: "mismatch")
        /// No answer at all (status 0).
        public static let network = Code(rawValue: "network")
        /// A 200 that is not a screen, or a 304 for a tree this client does not hold.
        public static let http = Code(rawValue: "http")

        /// An error answer without the hub's error body: someone else's (`http_404`, `http_502`).
        public static func foreign(status: Int) -> Code { Code(rawValue: "http_\(status)") }

        public var description: String { rawValue }
    }

    public var code: Code
    /// The HTTP status (0 when there was no answer).
    public var status: Int
    public var message: String

    public var description: String { "\(code.rawValue) (\(status)): \(message)" }

    /// The error of a non-200, non-304 answer: the hub's code and message when the body is the
    /// hub's error JSON, else `http_<status>` saying the answer is not the hub's.
    static func answered(status: Int, body: [UInt8]) -> FetchError {
        if let error = (try? JSONReader.parse(body))?["error"], let code = error["code"]?.stringValue {
            return FetchError(code: Code(rawValue: code), status: status, message: error["message"]?.stringValue ?? "")
        }
        let excerpt = String(decoding: body.prefix(200), as: UTF8.self).split(whereSeparator: \.isWhitespace)
            .joined(separator: " ")
        return FetchError(
            code: .foreign(status: status), status: status,
            message: "not a PushHub answer (HTTP \(status) from a proxy?)" + (excerpt.isEmpty ? "" : ": " + excerpt))
    }
}

extension PushHubClient {
    /// `GET /v1/screens/{name}` as this client (its token or device, platform, app version and components)
    /// with `If-None-Match` set to the hash it holds: a 304 returns the held tree, a 200 checks the
    /// new tree's hash and stores it (a later `subscribe` starts from it and resumes with `have`).
    /// Needs no live connection; a subscription keeps following the socket.
    public func fetchScreen(_ screen: String) async throws(FetchError) -> FetchedScreen {
        let result: Result<FetchedScreen, FetchError> = await withCheckedContinuation { continuation in
            queue.async { [self] in
                // The tree it holds, or the one stored in this user's scope for the epoch it is in
                // (any tree would do for If-None-Match, whose hash the hub compares; the version
                // returned with a 304 must be of this epoch).
                let kept = stored(screen, in: session.scope)
                let held = session.held(screen) ?? (kept?.epoch == session.epoch ? kept : nil)
                let request = fetchRequest(
                    screen,
                    held: held.map {
                        ScreenFetchTag.of(hash: $0.hash, variants: JSONObject($0.variants.mapValues(JSONValue.string)))
                    })
                transport.get(request) { answer in
                    self.queue.async {
                        continuation.resume(returning: self.fetched(screen, answer, held: held))
                    }
                }
            }
        }
        return try result.get()
    }

    private func fetchRequest(_ screen: String, held: String?) -> TransportRequest {
        var query: [(String, String)] = []
        if let platform = app?.platform { query.append(("platform", platform)) }
        if let version = app?.version { query.append(("app_version", version)) }
        if let components = session.components { query.append(("components", ComponentCapabilities.query(components))) }
        if let device { query.append(("device", device)) }
        let path =
            "/v1/screens/" + Self.percentEncoded(screen)
            + (query.isEmpty ? "" : "?" + query.map { "\($0.0)=\(Self.percentEncoded($0.1))" }.joined(separator: "&"))
        var headers = HeaderFields()
        if let token = currentToken() { headers.append(name: "Authorization", value: "Bearer \(token)") }
        if let held { headers.append(name: "If-None-Match", value: "\"\(held)\"") }
        return TransportRequest(url: url.with(path: path), headers: headers)
    }

    private func fetched(
        _ screen: String, _ answer: Result<HTTPAnswer, TransportError>, held: StoredScreen?
    ) -> Result<FetchedScreen, FetchError> {
        let response: HTTPAnswer
        switch answer {
        case .failure(let error): return .failure(FetchError(code: .network, status: 0, message: error.description))
        case .success(let answer): response = answer
        }
        switch response.status {
        case 304:
            guard let held else {
                return .failure(FetchError(code: .http, status: 304, message: "304 for a tree this client does not hold"))
            }
            return .success(FetchedScreen(screen: screen, tree: held.tree, version: held.version, hash: held.hash, status: 304))
        case 200:
            let body: JSONValue
            do {
                body = try JSONReader.parse(response.body, maxDepth: JSONReader.envelopeMaxDepth)
            } catch {
                return .failure(FetchError(code: .http, status: 200, message: "the answer is not JSON: \(error)"))
            }
            guard let tree = body["tree"], let version = body["version"]?.intValue, let hash = body["hash"]?.stringValue
            else {
                let excerpt = String(decoding: response.body.prefix(200), as: UTF8.self)
                return .failure(FetchError(code: .http, status: 200, message: "not a screen: \(excerpt)"))
            }
            let canonical = JSONWriter.write(tree)
            let actual = ScreenHash.of(canonical: canonical)
            guard actual == hash else {
                return .failure(FetchError(code: .mismatch, status: 200, message: "the tree hashes to \(actual), not \(hash)"))
            }
            if session.screens[screen] == nil, session.scope != .none {
                // Labelled with the epoch this user's storage is in: a later session in another
                // state drops it; one stored before any session (no epoch) serves fetches only.
                // The variants, when the answer names them, for the patches after a subscribe from it.
                let form = StoredScreen.form(
                    epoch: session.epoch, canonical: canonical, version: version, hash: hash,
                    variants: StoredScreen.variants(body["variants"]) ?? [:])
                write(session.scope.screenKey(screen), form)
            }
            return .success(FetchedScreen(screen: screen, tree: tree, version: version, hash: hash, status: 200))
        default: return .failure(FetchError.answered(status: response.status, body: response.body))
        }
    }

    /// RFC 3986 unreserved characters stay; everything else (`/` in screen names too) is escaped.
    static func percentEncoded(_ text: String) -> String {
        var unreserved = CharacterSet.alphanumerics
        unreserved.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }
}
