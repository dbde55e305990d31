/// Why a Redis command has no result. Each description names the command and says what
/// happened, so an operator reading a log line or a 503 knows where to look.
enum RedisError: Error, Equatable, CustomStringConvertible {
    /// Redis answered with an error reply (`-ERR …`, `-NOAUTH …`, `-WRONGTYPE …`).
    case server(command: String, message: String)
    /// The link is down; the command was not sent.
    case notConnected(command: String, reason: String)
    /// The link broke after the command was sent: Redis may or may not have run it.
    case connectionLost(command: String, reason: String)
    /// No reply within the command timeout; the link is dropped (Redis may have run it).
    case timedOut(command: String, milliseconds: Int)
    /// Redis sent something that is not RESP2, or a reply past our limits.
    case badReply(command: String, reason: String)

    var description: String {
        switch self {
        case .server(let command, let message):
            "Redis answered \(command) with an error: \(message)"
        case .notConnected(let command, let reason):
            "\(command) was not sent: Redis is not connected (\(reason))"
        case .connectionLost(let command, let reason):
            "the connection to Redis was lost before it answered \(command) (\(reason)); it may or may not have run"
        case .timedOut(let command, let milliseconds):
            "Redis did not answer \(command) within \(milliseconds) ms; the connection is dropped and made again"
        case .badReply(let command, let reason):
            "Redis's reply to \(command) could not be read: \(reason)"
        }
    }

    /// A write refused because the server is a replica now (`-READONLY`): after a failover.
    var isReadOnlyReplica: Bool {
        if case .server(_, let message) = self { return message.hasPrefix("READONLY") }
        return false
    }

    /// True when Redis may have run the command although no reply came.
    var outcomeUnknown: Bool {
        switch self {
        case .connectionLost, .timedOut, .badReply: true
        case .server, .notConnected: false
        }
    }
}
