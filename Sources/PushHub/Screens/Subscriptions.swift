/// One loop's subscriptions: screen name → subscribed connections, and per connection the
/// screen version it was last brought to.
///
/// Invariants: `byScreen[name]` contains a token iff `byConnection[token][name]` exists; no key
/// maps to an empty collection (the last removal deletes it).
struct Subscriptions {
    private(set) var byScreen: [String: Set<UInt64>] = [:]
    private var byConnection: [UInt64: [String: ScreenVersion]] = [:]

    func version(of token: UInt64, for screen: String) -> ScreenVersion? { byConnection[token]?[screen] }

    func screens(of token: UInt64) -> [String] { byConnection[token].map { Array($0.keys) } ?? [] }

    func subscribers(of screen: String) -> Set<UInt64> { byScreen[screen] ?? [] }

    /// Records that `token` now has `version` of its screen (subscribing it if new).
    mutating func set(_ token: UInt64, _ version: ScreenVersion) {
        byScreen[version.name, default: []].insert(token)
        byConnection[token, default: [:]][version.name] = version
    }

    /// - Returns: whether it was subscribed.
    @discardableResult
    mutating func remove(_ token: UInt64, from screen: String) -> Bool {
        guard byConnection[token]?.removeValue(forKey: screen) != nil else { return false }
        if byConnection[token]?.isEmpty == true { byConnection[token] = nil }
        byScreen[screen]?.remove(token)
        if byScreen[screen]?.isEmpty == true { byScreen[screen] = nil }
        return true
    }

    /// Removes every subscription of `token`; returns the screens it had.
    mutating func removeAll(_ token: UInt64) -> [String] {
        let screens = self.screens(of: token)
        for screen in screens { remove(token, from: screen) }
        return screens
    }

    /// Removes every subscriber of `screen`; returns them.
    mutating func removeScreen(_ screen: String) -> Set<UInt64> {
        let tokens = subscribers(of: screen)
        for token in tokens { remove(token, from: screen) }
        return tokens
    }

    var count: Int { byConnection.values.reduce(0) { $0 + $1.count } }
}
