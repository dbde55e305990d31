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

/// One loop's subscriptions, indexed both ways: screen name → subscribers, and connection →
/// its subscriptions.
///
/// Invariants: `byScreen[name][token]` and `byConnection[token][name]` are the same
/// `Subscriber` or both absent; no key maps to an empty dictionary (the last removal deletes
/// it); a connection is removed (`removeAll`) before it is released, so `unowned` is safe.
struct Subscriptions {
    private(set) var byScreen: [String: [UInt64: Subscriber]] = [:]
    private var byConnection: [UInt64: [String: Subscriber]] = [:]

    func subscriber(_ token: UInt64, of screen: String) -> Subscriber? { byConnection[token]?[screen] }

    /// The subscribers of `screen`, to iterate during a fan-out.
    func subscribers(of screen: String) -> Dictionary<UInt64, Subscriber>.Values? { byScreen[screen]?.values }

    func screens(of token: UInt64) -> [String] { byConnection[token].map { Array($0.keys) } ?? [] }

    /// Subscribes `connection` to `version.name` at `version`, or moves its subscription there.
    mutating func set(_ connection: Connection, _ version: ScreenVersion) {
        if let existing = byConnection[connection.token]?[version.name] {
            existing.version = version
            return
        }
        let subscriber = Subscriber(connection: connection, version: version)
        byScreen[version.name, default: [:]][connection.token] = subscriber
        byConnection[connection.token, default: [:]][version.name] = subscriber
    }

    /// - Returns: whether it was subscribed.
    @discardableResult
    mutating func remove(_ token: UInt64, from screen: String) -> Bool {
        guard byConnection[token]?.removeValue(forKey: screen) != nil else { return false }
        if byConnection[token]?.isEmpty == true { byConnection[token] = nil }
        byScreen[screen]?.removeValue(forKey: token)
        if byScreen[screen]?.isEmpty == true { byScreen[screen] = nil }
        return true
    }

    /// Removes every subscription of `token`; returns the screens it had.
    mutating func removeAll(_ token: UInt64) -> [String] {
        let screens = self.screens(of: token)
        for screen in screens { remove(token, from: screen) }
        return screens
    }

    /// Removes every subscriber of `screen`; returns their connections.
    mutating func removeScreen(_ screen: String) -> [Connection] {
        guard let subscribers = byScreen.removeValue(forKey: screen) else { return [] }
        for token in subscribers.keys {
            byConnection[token]?.removeValue(forKey: screen)
            if byConnection[token]?.isEmpty == true { byConnection[token] = nil }
        }
        return subscribers.values.map(\.connection)
    }

    var count: Int { byConnection.values.reduce(0) { $0 + $1.count } }
}
