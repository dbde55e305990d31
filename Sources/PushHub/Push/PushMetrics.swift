import Synchronization

/// What happened to a push (DESIGN §17), as `/metrics` counts it per provider.
enum PushOutcome: String, CaseIterable, Sendable {
    /// The provider accepted it.
    case pushed
    /// The provider said the token is dead; the registration was removed.
    case invalidToken = "invalid_token"
    /// The provider asked to try again later (429, 5xx), or the link failed: it waits its turn again.
    case retried
    /// The provider refused this push for good (a bad topic, a payload too large, …).
    case failed
    /// Its sync's TTL ran out before the provider took it.
    case expired
    /// The queue was full: it was never sent.
    case dropped
    /// The provider is stopped (it refused the hub's credentials) or not configured.
    case unavailable
    /// The device connected before a retry was due, so it had the sync over its socket.
    case online

    /// Whether the outcome ends the push as a failure (`push_failed` in the receipts).
    var isFailure: Bool {
        switch self {
        case .invalidToken, .failed, .expired, .dropped, .unavailable: true
        case .pushed, .retried, .online: false
        }
    }
}

/// The push counters `/metrics` exports (per provider): outcomes, the queue, whether the
/// provider is usable. Updated by the control plane's thread, read by any.
public final class PushMetrics: Sendable {
    /// One figure, relaxed like every counter of /metrics (atomics cannot be array elements).
    private final class Figure: Sendable {
        let value: Atomic<Int>
        init(_ initial: Int) { value = Atomic(initial) }
        func add(_ amount: Int) { value.add(amount, ordering: .relaxed) }
        func load() -> Int { value.load(ordering: .relaxed) }
        func store(_ new: Int) { value.store(new, ordering: .relaxed) }
    }

    private let outcomes: [Figure]
    private let queued: [Figure]
    /// 1 running, 0 stopped (its credentials were refused), -1 not configured (not exported).
    private let up: [Figure]

    init() {
        let slots = PushProvider.allCases.count
        outcomes = (0..<(slots * PushOutcome.allCases.count)).map { _ in Figure(0) }
        queued = (0..<slots).map { _ in Figure(0) }
        up = (0..<slots).map { _ in Figure(-1) }
    }

    private static func index(_ provider: PushProvider) -> Int { PushProvider.allCases.firstIndex(of: provider)! }

    private func outcomeSlot(_ provider: PushProvider, _ outcome: PushOutcome) -> Int {
        Self.index(provider) * PushOutcome.allCases.count + PushOutcome.allCases.firstIndex(of: outcome)!
    }

    func count(_ outcome: PushOutcome, _ provider: PushProvider, by amount: Int = 1) {
        outcomes[outcomeSlot(provider, outcome)].add(amount)
    }

    func outcomes(_ provider: PushProvider, _ outcome: PushOutcome) -> Int {
        outcomes[outcomeSlot(provider, outcome)].load()
    }

    func setQueued(_ count: Int, _ provider: PushProvider) { queued[Self.index(provider)].store(count) }

    func setUp(_ isUp: Bool, _ provider: PushProvider) { up[Self.index(provider)].store(isUp ? 1 : 0) }

    /// The Prometheus text of the configured providers' figures (the families without series
    /// when none is).
    var exposition: String {
        let configured = PushProvider.allCases.filter { up[Self.index($0)].load() >= 0 }
        var text = "# HELP pushhub_pushes_total Silent pushes by provider and outcome.\n"
        text += "# TYPE pushhub_pushes_total counter\n"
        // Every provider's outcomes: a push to a provider that is not configured counts as unavailable.
        for provider in PushProvider.allCases {
            for outcome in PushOutcome.allCases {
                text += "pushhub_pushes_total{provider=\"\(provider.rawValue)\",outcome=\"\(outcome.rawValue)\"} "
                text += "\(outcomes(provider, outcome))\n"
            }
        }
        text += "# HELP pushhub_push_queue Pushes waiting for their provider.\n# TYPE pushhub_push_queue gauge\n"
        for provider in configured {
            text += "pushhub_push_queue{provider=\"\(provider.rawValue)\"} "
            text += "\(queued[Self.index(provider)].load())\n"
        }
        text += "# HELP pushhub_push_provider_up Whether the provider takes the hub's credentials (0: stopped).\n"
        text += "# TYPE pushhub_push_provider_up gauge\n"
        for provider in configured {
            text += "pushhub_push_provider_up{provider=\"\(provider.rawValue)\"} "
            text += "\(up[Self.index(provider)].load())\n"
        }
        return text
    }
}
