/// One subscription on a loop: a connection, and the screen version it was last brought to.
/// A class so that a fan-out updates `version` in place, without touching the indexes.
final class Subscriber {
    unowned let connection: Connection
    var version: ScreenVersion

    init(connection: Connection, version: ScreenVersion) {
        self.connection = connection
        self.version = version
    }
}

/// One loop's subscriptions, indexed both ways: screen name → subscribers here, and each
/// connection's own `subscribed` list.
///
/// Invariants: a `Subscriber` is in `byScreen[name][token]` iff it is in its connection's
/// `subscribed`; no key maps to an empty dictionary (the last removal deletes it); a connection
/// is removed (`removeAll`) before it is released, so `unowned` is safe.
struct Subscriptions {
    private(set) var byScreen: [String: [UInt64: Subscriber]] = [:]

    func subscriber(_ connection: Connection, of screen: String) -> Subscriber? {
        connection.subscribed.first { $0.version.name == screen }
    }

    /// The subscribers of `screen`, to iterate during a fan-out.
    func subscribers(of screen: String) -> Dictionary<UInt64, Subscriber>.Values? { byScreen[screen]?.values }

    /// Subscribes `connection` to `version.name` at `version`, or moves its subscription there.
    /// - Returns: whether this is a new subscription.
    @discardableResult
    mutating func set(_ connection: Connection, _ version: ScreenVersion) -> Bool {
        if let existing = subscriber(connection, of: version.name) {
            existing.version = version
            return false
        }
        let subscriber = Subscriber(connection: connection, version: version)
        byScreen[version.name, default: [:]][connection.token] = subscriber
        connection.subscribed.append(subscriber)
        return true
    }

    /// - Returns: whether it was subscribed.
    @discardableResult
    mutating func remove(_ connection: Connection, from screen: String) -> Bool {
        guard let index = connection.subscribed.firstIndex(where: { $0.version.name == screen }) else { return false }
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
        let connections = subscribers.values.map(\.connection)
        for connection in connections { connection.subscribed.removeAll { $0.version.name == screen } }
        return connections
    }
}
