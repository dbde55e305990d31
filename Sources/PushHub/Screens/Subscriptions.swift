/// One loop's subscriptions, indexed both ways: screen name → subscribers here, and each
/// connection's own `subscribed` list.
///
/// Invariants: a connection is in `byScreen[name]` iff its `subscribed` has a version of
/// `name`; no key maps to an empty dictionary (the last removal deletes it); a connection is
/// removed (`removeAll`) before it is reaped.
struct Subscriptions {
    private(set) var byScreen: [String: [UInt64: Connection]] = [:]

    /// The connections subscribed to `screen` on this loop, to iterate during a fan-out.
    func subscribers(of screen: String) -> Dictionary<UInt64, Connection>.Values? { byScreen[screen]?.values }

    /// Subscribes `connection` to `version.name` at `version`, or moves its subscription there.
    /// - Returns: whether this is a new subscription.
    @discardableResult
    mutating func set(_ connection: Connection, _ version: ScreenVersion, _ target: RenderTarget) -> Bool {
        let subscription = Connection.Subscription(version: version, target: target)
        if let index = connection.subscriptionIndex(version.name) {
            connection.subscribed[index] = subscription
            return false
        }
        byScreen[version.name, default: [:]][connection.token] = connection
        connection.subscribed.append(subscription)
        return true
    }

    /// - Returns: whether it was subscribed.
    @discardableResult
    mutating func remove(_ connection: Connection, from screen: String) -> Bool {
        guard let index = connection.subscriptionIndex(screen) else { return false }
        connection.subscribed.remove(at: index)
        byScreen[screen]?.removeValue(forKey: connection.token)
        if byScreen[screen]?.isEmpty == true { byScreen[screen] = nil }
        return true
    }

    /// Removes every subscription of `connection`; returns the screens it had.
    mutating func removeAll(_ connection: Connection) -> [String] {
        let screens = connection.subscribed.map(\.version.name)
        for screen in screens { remove(connection, from: screen) }
        return screens
    }

    /// Removes every subscriber of `screen`; returns their connections.
    mutating func removeScreen(_ screen: String) -> [Connection] {
        guard let subscribers = byScreen.removeValue(forKey: screen) else { return [] }
        let connections = Array(subscribers.values)
        for connection in connections { connection.subscribed.removeAll { $0.version.name == screen } }
        return connections
    }
}
