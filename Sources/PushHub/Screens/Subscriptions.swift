/// One loop's subscriptions, indexed both ways: screen name → subscribers here, and each
/// connection's own `subscribed` list.
///
/// Invariants: a connection is in `byScreen[name]` iff its `subscribed` has a version of
/// `name`; no key maps to an empty dictionary (the last removal deletes it); a connection is
/// removed (`removeAll`) before it is reaped.
struct Subscriptions {
    private(set) var byScreen: [String: [UInt64: Connection]] = [:]
    /// The hub-wide counts (per screen and render target) this registry keeps up to date.
    let counts: SubscriberCounts

    init(counts: SubscriberCounts) { self.counts = counts }

    /// The connections subscribed to `screen` on this loop, to iterate during a fan-out.
    func subscribers(of screen: String) -> Dictionary<UInt64, Connection>.Values? { byScreen[screen]?.values }

    /// Subscribes `connection` to `version.name` at `version`, or moves its subscription there.
    /// - Returns: whether this is a new subscription.
    @discardableResult
    mutating func set(_ connection: Connection, _ version: ScreenVersion, _ target: RenderTarget) -> Bool {
        if let index = connection.subscriptionIndex(version.name) {
            update(connection, at: index, version, target)
            return false
        }
        byScreen[version.name, default: [:]][connection.token] = connection
        connection.subscribed.append(Connection.Subscription(version: version, target: target))
        counts.add(version.name, target)
        return true
    }

    /// Moves the subscription at `index` of `connection` to `version` as `target` sees it.
    func update(_ connection: Connection, at index: Int, _ version: ScreenVersion, _ target: RenderTarget) {
        let old = connection.subscribed[index].target
        connection.subscribed[index] = Connection.Subscription(version: version, target: target)
        if old != target {
            counts.remove(version.name, old)
            counts.add(version.name, target)
        }
    }

    /// - Returns: whether it was subscribed.
    @discardableResult
    mutating func remove(_ connection: Connection, from screen: String) -> Bool {
        guard let index = connection.subscriptionIndex(screen) else { return false }
        counts.remove(screen, connection.subscribed[index].target)
        connection.subscribed.remove(at: index)
        byScreen[screen]?.removeValue(forKey: connection.token)
        if byScreen[screen]?.isEmpty == true { byScreen[screen] = nil }
        return true
    }

    /// Removes every subscription of `connection`.
    mutating func removeAll(_ connection: Connection) {
        for screen in connection.subscribed.map(\.version.name) { remove(connection, from: screen) }
    }

    /// Removes every subscriber of `screen`; returns their connections.
    mutating func removeScreen(_ screen: String) -> [Connection] {
        guard let subscribers = byScreen.removeValue(forKey: screen) else { return [] }
        let connections = Array(subscribers.values)
        for connection in connections {
            for subscription in connection.subscribed where subscription.version.name == screen {
                counts.remove(screen, subscription.target)
            }
            connection.subscribed.removeAll { $0.version.name == screen }
        }
        return connections
    }
}
