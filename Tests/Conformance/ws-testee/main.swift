import Foundation
import PushHubClient
import Sockets
import WSProtocol

// The client side of WSProtocol under the Autobahn|Testsuite's fuzzingserver: it runs every
// case as an echo client with permessage-deflate offered (text and binary echoed, pings
// answered, closes echoed), then asks the server to write its report.
//
//   ws-testee HOST:PORT [AGENT]

let arguments = CommandLine.arguments
guard arguments.count >= 2, let server = SocketAddress(parsing: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: ws-testee HOST:PORT [AGENT]\n".utf8))
    exit(2)
}
let agent = arguments.count > 2 ? arguments[2] : "pushhub-client"

/// Runs one connection as an echo client until it closes.
func echo(path: String) -> String? {
    let client: WebSocketClient
    do {
        // Offers permessage-deflate (groups 12 and 13) and compresses every echo it sends.
        client = try WebSocketClient(
            address: server, path: path, limits: .echo, timeout: .seconds(60), compressionMinimumBytes: 0)
    } catch {
        FileHandle.standardError.write(Data("connect \(path): \(error)\n".utf8))
        return nil
    }
    var firstText: String?
    do {
        while let message = try client.receive() {
            switch message {
            case .text(let text):
                if firstText == nil { firstText = text }
                try client.send(.text, Array(text.utf8))
            case .binary(let bytes):
                try client.send(.binary, bytes)
            case .ping(let payload):
                try client.send(.pong, payload)
            case .pong:
                break
            case .close(let close):
                try? client.sendClose(close.code ?? .normal)
                client.waitUntilClosed()
                return firstText
            }
        }
    } catch let error as ProtocolError {
        try? client.sendClose(error.closeCode)
        client.waitUntilClosed()
    } catch {
        // the server dropped the connection
    }
    return firstText
}

guard let countText = echo(path: "/getCaseCount"), let count = Int(countText) else {
    FileHandle.standardError.write(Data("could not read the case count\n".utf8))
    exit(1)
}
for index in 1...count {
    _ = echo(path: "/runCase?case=\(index)&agent=\(agent)")
}
_ = echo(path: "/updateReports?agent=\(agent)")
print("ran \(count) cases")
