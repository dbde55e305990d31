import Foundation
import PushHub
import PushHubClient
import WSProtocol

/// A blocking HTTP/1.1 client for the admin API: one request per connection.
///
/// Invariant: `send` returns the hub's answer whatever its status, or throws
/// `AdminClient.Unreachable` when no answer could be had (exit 3).
struct AdminClient {
    struct Unreachable: Error, CustomStringConvertible {
        var description: String
    }

    struct Answer {
        var status: Int
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }

        /// The hub's `{"error":{"message":…}}`, or the raw body.
        var errorMessage: String {
            if let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
                let error = object["error"] as? [String: Any], let message = error["message"] as? String
            {
                return message
            }
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    let address: SocketAddress
    let url: String
    /// The admin token (`HubSecret.adminToken`); `watch` sets it when its `--token` is not a JWT.
    var token: String?
    /// Set for an https:// URL: whom to trust.
    let tls: TLSTrust?
    /// Whom wss:// (watch) trusts, whatever the admin URL's scheme.
    let trust: TLSTrust

    init(url: String, token: String?, trust: TLSTrust = .system) throws(UsageError) {
        let scheme = ["http://", "https://"].first { url.hasPrefix($0) }
        guard let scheme else { throw UsageError("--url wants http://HOST:PORT or https://HOST:PORT, not '\(url)'") }
        var hostPort = String(url.dropFirst(scheme.count))
        while hostPort.hasSuffix("/") { hostPort.removeLast() }
        // `host`, `[v6]` and `v4` without a port mean the scheme's port; a bare IPv6 needs brackets.
        if !hostPort.contains(":") || hostPort.hasSuffix("]") { hostPort += scheme == "https://" ? ":443" : ":80" }
        guard let address = SocketAddress(parsing: hostPort) else {
            throw UsageError("--url wants \(scheme)HOST:PORT, not '\(url)'")
        }
        self.address = address
        self.url = url
        self.token = token
        self.tls = scheme == "https://" ? trust : nil
        self.trust = trust
    }

    func send(_ method: String, _ path: String, body: [UInt8] = []) throws(Unreachable) -> Answer {
        do {
            let answer = try BlockingHTTP.request(
                address, method: method, path: path, body: body, bearer: token, tls: tls)
            return Answer(status: answer.status, body: answer.body)
        } catch {
            throw Unreachable(description: "cannot reach the hub at \(url): \(error)")
        }
    }
}
