import Foundation

/// A value that several threads read and write, each access under one lock: what the client
/// publishes to other threads (its state, trees, stats) and `MemoryStorage`'s values. `NSLock`
/// is there on every platform the client builds for (Synchronization's `Mutex` needs iOS 18).
///
/// Invariant: `value` is only touched inside `withLock`, which holds `lock` for the whole body.
final class Locked<Value> {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

extension Locked: @unchecked Sendable where Value: Sendable {}
