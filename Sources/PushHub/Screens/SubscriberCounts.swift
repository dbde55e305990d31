import Synchronization

/// How many subscribers each screen has per render target, across all loops: enough to answer
/// a publish with how many renditions and subscribers it reaches without asking every loop.
///
/// Invariant: counts are positive; a target whose count drops to 0 is removed, and a screen
/// without targets too.
public final class SubscriberCounts: Sendable {
    private let counts = Mutex<[String: [RenderTarget: Int]]>([:])  // guarded by itself

    public init() {}

    func add(_ screen: String, _ target: RenderTarget) {
        counts.withLock { $0[screen, default: [:]][target, default: 0] += 1 }
    }

    func remove(_ screen: String, _ target: RenderTarget) {
        counts.withLock { counts in
            guard let count = counts[screen]?[target] else { return }
            counts[screen]![target] = count > 1 ? count - 1 : nil
            if counts[screen]!.isEmpty { counts[screen] = nil }
        }
    }

    public func targets(of screen: String) -> [RenderTarget: Int] { counts.withLock { $0[screen] ?? [:] } }

    public func total(of screen: String) -> Int { targets(of: screen).values.reduce(0, +) }

    /// Who a change from `old` to `new` reaches: subscribers whose rendered tree changes, and
    /// the distinct renditions of `new` among all subscribers.
    public func reach(from old: ScreenVersion?, to new: ScreenVersion) -> (sent: Int, renditions: Int) {
        var sent = 0
        var renditions = Set<RenditionKey>()
        for (target, count) in targets(of: new.name) {
            renditions.insert(new.renditionKey(for: target))
            if old?.rendered(for: target).hash != new.rendered(for: target).hash { sent += count }
        }
        return (sent, renditions.count)
    }
}
