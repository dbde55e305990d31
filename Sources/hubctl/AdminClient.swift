import Foundation
import PushHub
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
    let token: String?

    init(url: String, token: String?) throws(UsageError) {
        guard url.hasPrefix("http://") else { throw UsageError("--url wants http://HOST:PORT, not '\(url)'") }
        var hostPort = String(url.dropFirst("http://".count))
        while hostPort.hasSuffix("/") { hostPort.removeLast() }
        if !hostPort.contains(":") { hostPort += ":80" }
        guard let address = SocketAddress(parsing: hostPort) else {
            throw UsageError("--url wants http://HOST:PORT, not '\(url)'")
        }
        self.address = address
        self.url = url
        self.token = token
    }

    func send(_ method: String, _ path: String, body: [UInt8] = []) throws(Unreachable) -> Answer {
        do {
            let socket = try BlockingSocket(connectingTo: address, timeout: .seconds(10))
            var head =
                "\(method) \(path) HTTP/1.1\r\nHost: \(address)\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
            if let token { head += "Authorization: Bearer \(token)\r\n" }
            if !body.isEmpty { head += "Content-Type: application/json\r\n" }
            try socket.write(Array((head + "\r\n").utf8) + body)
            var received: [UInt8] = []
            while true {
                let chunk = try socket.read()
                if chunk.isEmpty { break }
                received += chunk
            }
            guard let response = try ClientHandshake.parseResponse(received) else {
                throw Unreachable(description: "the hub at \(url) closed the connection before answering")
            }
            return Answer(status: response.status, body: Array(received[response.headLength...]))
        } catch let error as Unreachable {
            throw error
        } catch {
            throw Unreachable(description: "cannot reach the hub at \(url): \(error)")
        }
    }
}
