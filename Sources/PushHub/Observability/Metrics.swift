import Synchronization

/// The hub's counters, shared by every loop and read by the admin API.
///
/// Relaxed atomics: each update is one uncontended add on a loop's hot path; readers see a
/// consistent enough snapshot for gauges and monotonic counters.
/// Invariant: gauges (`openConnections`, `webSocketConnections`) return to 0 when every
/// connection is gone; counters only grow.
public final class Metrics: Sendable {
    public let openConnections = Atomic<Int>(0)
    public let webSocketConnections = Atomic<Int>(0)
    public let acceptedTotal = Atomic<Int>(0)
    public let handshakesRejected = Atomic<Int>(0)
    public let messagesIn = Atomic<Int>(0)
    public let messagesOut = Atomic<Int>(0)
    public let bytesOut = Atomic<Int>(0)
    public let protocolCloses = Atomic<Int>(0)
    public let timeoutCloses = Atomic<Int>(0)
    public let slowConsumerCloses = Atomic<Int>(0)
    /// Screen updates skipped for a congested connection (superseded by a later catch-up).
    public let coalesced = Atomic<Int>(0)

    public init() {}

    /// Process-wide: renditions rendered and outgoing screen messages encoded (DESIGN §4's
    /// "once per rendition", checked by the benchmarks).
    public static let renders = Atomic<Int>(0)
    public static let encodes = Atomic<Int>(0)

    /// The counters as Prometheus text exposition format (version 0.0.4).
    public func prometheusText() -> String {
        let rows: [(String, String, String, Int)] = [
            (
                "pushhub_connections", "gauge", "Open TCP connections on both listeners.",
                openConnections.load(ordering: .relaxed)
            ),
            (
                "pushhub_websocket_connections", "gauge", "Open WebSocket connections.",
                webSocketConnections.load(ordering: .relaxed)
            ),
            ("pushhub_accepted_total", "counter", "Accepted TCP connections.", acceptedTotal.load(ordering: .relaxed)),
            (
                "pushhub_handshakes_rejected_total", "counter", "Upgrade requests answered with 4xx.",
                handshakesRejected.load(ordering: .relaxed)
            ),
            (
                "pushhub_messages_in_total", "counter", "WebSocket messages received.",
                messagesIn.load(ordering: .relaxed)
            ),
            ("pushhub_messages_out_total", "counter", "WebSocket messages sent.", messagesOut.load(ordering: .relaxed)),
            ("pushhub_bytes_out_total", "counter", "Bytes written to sockets.", bytesOut.load(ordering: .relaxed)),
            (
                "pushhub_protocol_closes_total", "counter", "Connections failed for RFC 6455 violations or limits.",
                protocolCloses.load(ordering: .relaxed)
            ),
            (
                "pushhub_timeout_closes_total", "counter", "Connections closed by a handshake, hello or idle timeout.",
                timeoutCloses.load(ordering: .relaxed)
            ),
            (
                "pushhub_slow_consumer_closes_total", "counter", "Connections closed at the outbound hard limit.",
                slowConsumerCloses.load(ordering: .relaxed)
            ),
            (
                "pushhub_renders_total", "counter", "Screen renditions rendered.",
                Metrics.renders.load(ordering: .relaxed)
            ),
            (
                "pushhub_encodes_total", "counter", "Screen messages encoded (snapshots and patches).",
                Metrics.encodes.load(ordering: .relaxed)
            ),
        ]
        return rows.map { "# HELP \($0.0) \($0.2)\n# TYPE \($0.0) \($0.1)\n\($0.0) \($0.3)\n" }.joined()
    }
}
