/// The client's rule for a dead link (docs/protocol.md "Heartbeats"): a client that asks for
/// heartbeats (`hello.heartbeat`) gets something from the hub at least every `heartbeat_s`
/// (a `heartbeat`, or what the hub had queued), so when nothing at all arrived for
/// 2 × heartbeat_s + 2 s the link is dead — a dropped NAT mapping, a hub gone without a FIN —
/// and the client stops using it and reconnects. Pure: the caller passes `now` and arms one
/// timer for `deadline`.
///
/// Invariant: `deadline` is nil exactly while there is no connection, or the connection's hub
/// sends no heartbeats (a hub from before them names no `epoch` in its welcome: its silence
/// proves nothing); it only moves later as messages arrive, so a timer armed for an earlier
/// deadline re-checks and re-arms.
struct LinkLiveness: Sendable, Equatable {
    /// The protocol's default interval, until a welcome names the hub's.
    static let defaultHeartbeat: Duration = .seconds(25)

    private(set) var heartbeat = Self.defaultHeartbeat
    private var heardAt: ContinuousClock.Instant?

    /// How long a link may be silent: two heartbeats and 2 s for the network's jitter.
    var limit: Duration { heartbeat * 2 + .seconds(2) }

    /// When the link is dead if nothing arrives before; nil without a connection.
    var deadline: ContinuousClock.Instant? { heardAt.map { $0 + limit } }

    /// A connection is being made: the same limit covers its handshake and the welcome.
    mutating func connecting(now: ContinuousClock.Instant) { heardAt = now }

    /// Something arrived.
    mutating func heard(now: ContinuousClock.Instant) {
        if heardAt != nil { heardAt = now }
    }

    /// The welcome named the hub's interval (`heartbeat_s`; 0 or less keeps the current one), and
    /// whether that hub sends heartbeats at all (no: the link is not watched until the next one).
    mutating func welcomed(heartbeatSeconds: Int, hubSendsHeartbeats: Bool = true) {
        if heartbeatSeconds > 0 { heartbeat = .seconds(heartbeatSeconds) }
        if !hubSendsHeartbeats { heardAt = nil }
    }

    mutating func closed() { heardAt = nil }

    /// Whether the link is dead at `now`; nil without a connection.
    func isDead(now: ContinuousClock.Instant) -> Bool {
        guard let deadline else { return false }
        return now >= deadline
    }

    /// How long nothing has arrived (zero without a connection).
    func silence(now: ContinuousClock.Instant) -> Duration { heardAt.map { now - $0 } ?? .zero }
}
