import Synchronization

/// The hub's counters, shared by every loop and read by the admin API.
///
/// Relaxed atomics; readers see a consistent enough snapshot for gauges and monotonic counters.
/// What changes per delivery (messages and bytes out, sync deliveries) a loop counts itself and
/// adds here once per tick; the rest changes per connection or per event.
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
    /// TLS handshakes completed, those that resumed a session, and those that failed.
    public let tlsHandshakes = Atomic<Int>(0)
    public let tlsResumed = Atomic<Int>(0)
    public let tlsFailures = Atomic<Int>(0)
    public let slowConsumerCloses = Atomic<Int>(0)
    /// permessage-deflate: connections that agreed it (gauge), frames compressed (once per shared
    /// frame per loop), messages sent compressed, and compressed client messages inflated.
    public let compressedConnections = Atomic<Int>(0)
    public let compressions = Atomic<Int>(0)
    public let compressedMessagesOut = Atomic<Int>(0)
    public let compressedMessagesIn = Atomic<Int>(0)
    /// Clients closed (1008) for sending over the message rate after a warning.
    public let rateLimitCloses = Atomic<Int>(0)
    /// Upgrades refused for their `Origin` (403) and for the connection limit (503).
    public let originRefusals = Atomic<Int>(0)
    public let capacityRefusals = Atomic<Int>(0)
    /// Upgrades refused (429) at the per-address limit.
    public let addressRefusals = Atomic<Int>(0)
    /// Subscribes refused at the per-connection limit.
    public let subscriptionRefusals = Atomic<Int>(0)
    /// Screen updates and syncs held back for a congested connection (superseded by a catch-up).
    public let coalesced = Atomic<Int>(0)
    /// Signed-in sessions and their subscriptions (gauges).
    public let sessions = Atomic<Int>(0)
    public let subscriptions = Atomic<Int>(0)
    /// Fan-outs of a published version run by the loops.
    public let fanouts = Atomic<Int>(0)
    /// Sync receipts summed over every sync (DESIGN §5).
    public let syncsDelivered = Atomic<Int>(0)
    public let syncsAcked = Atomic<Int>(0)
    /// Group commits: fsyncs, the records they covered, and the time they took.
    public let commits = Atomic<Int>(0)
    public let committedRecords = Atomic<Int>(0)
    public let commitNanoseconds = Atomic<Int>(0)
    /// Writes that could not be made durable (journal, snapshot, exposure log): logged and counted.
    public let persistFailures = Atomic<Int>(0)
    /// Experiment results (DESIGN §6): events appended to the results log (exposures, goals), and
    /// events dropped because the shared results stream was away too long.
    public let resultEvents = Atomic<Int>(0)
    public let resultsDropped = Atomic<Int>(0)
    /// Silent pushes (DESIGN §17).
    public let push = PushMetrics()
    /// Client tokens: refusals, JWKS fetches and keys (DESIGN §18).
    public let jwt = JWTMetrics()
    /// Releases halted (DESIGN §15) by their guard and by an operator (`/metrics` shows them
    /// with the release gauges, `ControlPlane.releaseMetricsText`).
    public let releaseHaltsByGuard = Atomic<Int>(0)
    public let releaseHaltsManual = Atomic<Int>(0)
    /// Set once, when the hub starts shutting down (`Hub.shutdown`), before any loop is told:
    /// `/readyz` answers 503 from then on (`Readiness`), and `pushhub_draining` is 1.
    public let draining = Atomic<Bool>(false)
    /// Scale-out (DESIGN §11): whether the Redis link is up (gauge, 1 or 0; -1 on a hub that is
    /// not scaled out, which then does not export it, so an alert on `pushhub_redis_up == 0`
    /// never fires for a standalone hub), appends that lost the race for the next journal entry,
    /// and entries other hubs appended that this one applied.
    public let redisUp = Atomic<Int>(-1)
    public let redisConflicts = Atomic<Int>(0)
    public let redisEntriesApplied = Atomic<Int>(0)
    /// Times this hub fell behind the trimmed journal and reloaded the shared snapshot.
    public let redisSnapshotReloads = Atomic<Int>(0)
    /// Times free memory was given back to the system, and how many bytes the allocator held then.
    public let memoryTrims = Atomic<Int>(0)
    public let memoryTrimmedBytes = Atomic<Int>(0)

    /// Per loop: the client loops, then the control plane's (empty for a hub built without loops).
    public let loops: [LoopMetrics]

    /// - Parameter loops: how many client loops the hub runs (their figures, and the control
    ///   plane's loop after them, are exported per loop).
    public init(loops: Int = 0) {
        self.loops =
            loops > 0
            ? (0..<loops).map { LoopMetrics(index: $0, role: "client") } + [LoopMetrics(index: loops, role: "control")]
            : []
    }

    func noteCommit(records: Int, nanoseconds: UInt64) {
        commits.add(1, ordering: .relaxed)
        committedRecords.add(records, ordering: .relaxed)
        commitNanoseconds.add(Int(nanoseconds), ordering: .relaxed)
    }


    /// Process-wide: renditions rendered and outgoing screen messages encoded (DESIGN §4's
    /// "once per rendition", checked by the benchmarks).
    public static let renders = Atomic<Int>(0)
    public static let encodes = Atomic<Int>(0)
    /// Of the encodes: patches and snapshots (DESIGN §4 sends whichever is smaller).
    public static let patchesEncoded = Atomic<Int>(0)
    public static let snapshotsEncoded = Atomic<Int>(0)

    /// The counters as Prometheus text exposition format (version 0.0.4).
    public func prometheusText() -> String {
        var rows: [(String, String, String, Int)] = [
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
            ("pushhub_tls_handshakes_total", "counter", "TLS handshakes completed.", tlsHandshakes.load(ordering: .relaxed)),
            (
                "pushhub_tls_resumed_total", "counter", "TLS handshakes that resumed an earlier session.",
                tlsResumed.load(ordering: .relaxed)
            ),
            (
                "pushhub_tls_failures_total", "counter", "TLS connections that failed (handshake or record errors).",
                tlsFailures.load(ordering: .relaxed)
            ),
            (
                "pushhub_compressed_connections", "gauge", "WebSocket connections that agreed permessage-deflate.",
                compressedConnections.load(ordering: .relaxed)
            ),
            (
                "pushhub_compressions_total", "counter", "Frames compressed (a shared frame once per loop).",
                compressions.load(ordering: .relaxed)
            ),
            (
                "pushhub_compressed_messages_out_total", "counter", "Messages sent compressed (permessage-deflate).",
                compressedMessagesOut.load(ordering: .relaxed)
            ),
            (
                "pushhub_compressed_messages_in_total", "counter", "Compressed client messages inflated.",
                compressedMessagesIn.load(ordering: .relaxed)
            ),
            (
                "pushhub_slow_consumer_closes_total", "counter", "Connections closed at the outbound hard limit.",
                slowConsumerCloses.load(ordering: .relaxed)
            ),
            (
                "pushhub_origin_refusals_total", "counter", "Upgrades refused (403) for their Origin.",
                originRefusals.load(ordering: .relaxed)
            ),
            (
                "pushhub_capacity_refusals_total", "counter", "Upgrades refused (503) at the connection limit.",
                capacityRefusals.load(ordering: .relaxed)
            ),
            (
                "pushhub_address_refusals_total", "counter", "Upgrades refused (429) at the per-address limit.",
                addressRefusals.load(ordering: .relaxed)
            ),
            (
                "pushhub_subscription_refusals_total", "counter", "Subscribes refused at the per-connection limit.",
                subscriptionRefusals.load(ordering: .relaxed)
            ),
            (
                "pushhub_rate_limit_closes_total", "counter", "Clients closed for exceeding the message rate.",
                rateLimitCloses.load(ordering: .relaxed)
            ),
            (
                "pushhub_coalesced_total", "counter", "Updates and syncs held back for congested connections.",
                coalesced.load(ordering: .relaxed)
            ),
            ("pushhub_sessions", "gauge", "Signed-in client sessions.", sessions.load(ordering: .relaxed)),
            ("pushhub_subscriptions", "gauge", "Screen subscriptions.", subscriptions.load(ordering: .relaxed)),
            (
                "pushhub_draining", "gauge", "1 from the shutdown signal until the hub exits, else 0.",
                draining.load(ordering: .relaxed) ? 1 : 0
            ),
            ("pushhub_fanouts_total", "counter", "Published versions fanned out by a loop.", fanouts.load(ordering: .relaxed)),
            (
                "pushhub_syncs_delivered_total", "counter", "Syncs queued to clients (receipts).",
                syncsDelivered.load(ordering: .relaxed)
            ),
            ("pushhub_syncs_acked_total", "counter", "Syncs acknowledged by clients.", syncsAcked.load(ordering: .relaxed)),
            ("pushhub_commits_total", "counter", "Group commits (one fsync each).", commits.load(ordering: .relaxed)),
            (
                "pushhub_committed_records_total", "counter", "Records made durable (records / commits = group size).",
                committedRecords.load(ordering: .relaxed)
            ),
            (
                "pushhub_persist_failures_total", "counter", "Writes that could not be made durable.",
                persistFailures.load(ordering: .relaxed)
            ),
            (
                "pushhub_result_events_total", "counter", "Experiment result events appended (exposures, goals).",
                resultEvents.load(ordering: .relaxed)
            ),
            (
                "pushhub_results_dropped_total", "counter", "Result events dropped while Redis was away too long.",
                resultsDropped.load(ordering: .relaxed)
            ),
            (
                "pushhub_redis_conflicts_total", "counter", "Journal appends another hub beat to the entry (made again).",
                redisConflicts.load(ordering: .relaxed)
            ),
            (
                "pushhub_redis_entries_applied_total", "counter", "Journal entries from other hubs applied.",
                redisEntriesApplied.load(ordering: .relaxed)
            ),
            (
                "pushhub_redis_snapshot_reloads_total", "counter", "Reloads of the shared snapshot (fell behind the journal).",
                redisSnapshotReloads.load(ordering: .relaxed)
            ),
            (
                "pushhub_memory_trims_total", "counter", "Times freed memory was returned to the system.",
                memoryTrims.load(ordering: .relaxed)
            ),
            (
                "pushhub_memory_trimmed_bytes_total", "counter", "Free allocator bytes held when those trims ran.",
                memoryTrimmedBytes.load(ordering: .relaxed)
            ),
            (
                "pushhub_patches_encoded_total", "counter", "Patch messages encoded.",
                Metrics.patchesEncoded.load(ordering: .relaxed)
            ),
            (
                "pushhub_snapshots_encoded_total", "counter", "Snapshot messages encoded.",
                Metrics.snapshotsEncoded.load(ordering: .relaxed)
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
        let redisUp = redisUp.load(ordering: .relaxed)
        if redisUp >= 0 {
            rows.append(("pushhub_redis_up", "gauge", "Whether the Redis link is up (scaled-out hubs only).", redisUp))
        }
        let seconds: [(String, String, String, Double)] = [
            (
                "pushhub_commit_seconds_total", "counter", "Time spent writing and fsyncing group commits.",
                Double(commitNanoseconds.load(ordering: .relaxed)) / 1e9
            ),
            (
                "pushhub_loop_lag_seconds", "gauge", "The longest loop tick in the last 10 to 20 seconds.",
                // The loops' own windows: the hub's lag is the latest of its loops.
                Double(loops.map { $0.lag.longest(now: MonotonicClock.now()) }.max() ?? 0) / 1e9
            ),
        ]
        let now = MonotonicClock.now()
        let perLoop: [(String, String, (LoopMetrics) -> String)] = [
            ("pushhub_loop_connections", "Open connections of each event loop.", { "\($0.connections.load(ordering: .relaxed))" }),
            (
                "pushhub_loop_tick_max_seconds", "The longest tick of each event loop in the last 10 to 20 seconds.",
                { "\(Double($0.lag.longest(now: now)) / 1e9)" }
            ),
        ]
        let labelled = loops.isEmpty ? "" : perLoop.map { name, help, value in
            PrometheusText.header(name, "gauge", help)
                + loops.map { "\(name){loop=\"\($0.index)\",role=\"\($0.role)\"} \(value($0))\n" }.joined()
        }.joined()
        return labelled + rows.map { PrometheusText.family($0.0, $0.1, $0.2, String($0.3)) }.joined()
            + seconds.map { PrometheusText.family($0.0, $0.1, $0.2, String($0.3)) }.joined() + push.exposition + jwt.exposition
    }
}
