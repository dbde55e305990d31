/// Whether the hub takes new clients: `/readyz` (200 or 503) and the `pushhub_ready` gauge.
///
/// A load balancer sends new clients only to a ready hub. Not ready: from the moment SIGTERM is
/// handled (`Metrics.draining`, set before any loop hears of the shutdown, so no request answered
/// after the signal says ready), and while a hub scaled out over Redis cannot reach it (it serves
/// its connected clients from memory, but a new client could not get a change made meanwhile).
/// `/livez` answers 200 in both cases: the process is alive and must not be restarted for it.
enum Readiness: Equatable {
    case ready
    case draining
    case degraded(reason: String)

    /// The hub's readiness now; runs on the control plane's loop.
    static func of(_ plane: ControlPlane) -> Readiness {
        if plane.metrics.draining.load(ordering: .acquiring) { return .draining }
        guard let reason = plane.log.degradation else { return .ready }
        return .degraded(reason: reason)
    }

    var httpStatus: Int { self == .ready ? 200 : 503 }

    /// `{"status":"ready"}`, `{"status":"draining"}` or `{"status":"degraded","message":…}`.
    var body: JSONValue {
        switch self {
        case .ready: .object(["status": .string("ready")])
        case .draining: .object(["status": .string("draining")])
        case .degraded(let reason): .object(["status": .string("degraded"), "message": .string(reason)])
        }
    }
}
