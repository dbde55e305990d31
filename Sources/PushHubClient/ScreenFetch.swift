import Foundation
import ScreenTree
import WSProtocol

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
    public enum Code: String, Sendable {
        case unauthorized, unknownScreen = "unknown_screen", mismatch, network, http
    }

    public var code: Code
    /// The HTTP status (0 when there was no answer).
    public var status: Int
    public var message: String

    public var description: String { "\(code.rawValue) (\(status)): \(message)" }
}

extension PushHubClient {
    /// `GET /v1/screens/{name}` as this client (its token or device, platform and app version)
    /// with `If-None-Match` set to the hash it holds: a 304 returns the held tree, a 200 checks the
    /// new tree's hash and stores it (a later `subscribe` starts from it and resumes with `have`).
    /// Needs no live connection; a subscription keeps following the socket.
    public func fetchScreen(_ screen: String) async throws(FetchError) -> FetchedScreen {
        let result: Result<FetchedScreen, FetchError> = await withCheckedContinuation { continuation in
            queue.async { [self] in
                let held = session.held(screen) ?? stored(screen)
                let request = fetchRequest(screen, held: held?.hash)
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
        _ screen: String, _ answer: Result<HTTPAnswer, TransportError>, held: (tree: JSONValue, version: Int, hash: String)?
    ) -> Result<FetchedScreen, FetchError> {
        let response: HTTPAnswer
        switch answer {
        case .failure(let error): return .failure(FetchError(code: .network, status: 0, message: error.description))
        case .success(let answer): response = answer
        }
        let message = String(decoding: response.body, as: UTF8.self)
        switch response.status {
        case 304:
            guard let held else {
                return .failure(FetchError(code: .http, status: 304, message: "304 for a tree this client does not hold"))
            }
            return .success(FetchedScreen(screen: screen, tree: held.tree, version: held.version, hash: held.hash, status: 304))
        case 200:
            let body: JSONValue
            do {
                body = try JSONReader.parse(response.body)
            } catch {
                return .failure(FetchError(code: .http, status: 200, message: "the answer is not JSON: \(error)"))
            }
            guard let tree = body["tree"], let version = body["version"]?.intValue, let hash = body["hash"]?.stringValue
            else {
                return .failure(FetchError(code: .http, status: 200, message: "not a screen: \(message.prefix(200))"))
            }
            let canonical = JSONWriter.write(tree)
            let actual = ScreenHash.of(canonical: canonical)
            guard actual == hash else {
                return .failure(FetchError(code: .mismatch, status: 200, message: "the tree hashes to \(actual), not \(hash)"))
            }
            if session.screens[screen] == nil {
                write(ClientSession.screenKey(screen), ClientSession.storedForm(canonical: canonical, version, hash))
            }
            return .success(FetchedScreen(screen: screen, tree: tree, version: version, hash: hash, status: 200))
        case 401: return .failure(FetchError(code: .unauthorized, status: 401, message: message))
        case 404: return .failure(FetchError(code: .unknownScreen, status: 404, message: message))
        default: return .failure(FetchError(code: .http, status: response.status, message: message))
        }
    }

    /// RFC 3986 unreserved characters stay; everything else (`/` in screen names too) is escaped.
    static func percentEncoded(_ text: String) -> String {
        var unreserved = CharacterSet.alphanumerics
        unreserved.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }
}
