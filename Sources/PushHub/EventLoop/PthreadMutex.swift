import Glibc

/// A value guarded by a pthread mutex: the lock behind `Mailbox`. A pthread mutex rather than
/// `Synchronization.Mutex`, whose Linux implementation waits on futexes directly: ThreadSanitizer
/// models pthread locks, so `make tsan` sees the ordering the mailbox provides (with `Mutex` it
/// reported every post/drain pair as a race).
///
/// Invariant: `value` is read and written only between `pthread_mutex_lock` and `unlock`.
final class PthreadMutex<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value  // guarded by `mutex`

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "a default mutex initializes")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(&value)
    }
}
