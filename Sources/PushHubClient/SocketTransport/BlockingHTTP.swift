// Linux only, like the rest of SocketTransport/: Apple's platforms use URLSessionTransport.
#if PUSHHUB_SOCKET_TRANSPORT
    import Sockets
    import WSProtocol

    /// One blocking HTTP/1.1 request per connection (`Connection: close`), for the tools that talk
    /// to the admin API: hubctl and the benchmarks.
    ///
    /// Invariant: returns only once the server closed the connection after a complete response head.
    public enum BlockingHTTP {
        public struct Answer: Sendable {
            public var status: Int
            public var headers: HeaderFields
            public var body: [UInt8]
        }

        public struct NoAnswer: Error, CustomStringConvertible {
            public var description: String
        }

        public static func request(
            _ address: SocketAddress, method: String, path: String, body: [UInt8] = [],
            bearer: String? = nil, headers: HeaderFields = HeaderFields(), timeout: Duration = .seconds(10),
            tls: TLSTrust? = nil
        ) throws -> Answer {
            let channel = try TLSChannel.open(to: address, timeout: timeout, tls: tls)
            var head =
                "\(method) \(path) HTTP/1.1\r\nHost: \(address)\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
            if let bearer { head += "Authorization: Bearer \(bearer)\r\n" }
            if !body.isEmpty { head += "Content-Type: application/json\r\n" }
            for field in headers { head += "\(field.name): \(field.value)\r\n" }
            try channel.write(Array((head + "\r\n").utf8) + body)
            var received: [UInt8] = []
            while true {
                let chunk = try channel.read(max: 64 << 10)
                if chunk.isEmpty { break }
                received += chunk
            }
            guard let response = try ClientHandshake.parseResponse(received) else {
                throw NoAnswer(description: "the server at \(address) closed the connection before answering")
            }
            return Answer(
                status: response.status, headers: response.headers, body: Array(received[response.headLength...]))
        }
    }
#endif
