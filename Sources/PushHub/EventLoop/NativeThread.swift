import Glibc

/// A thread of its own (pthreads; Foundation's `Thread` would link Foundation into the hub): the
/// event loops (`LoopGroup`, joined at exit) and blocking name lookups (`AddressLookup`, detached).
enum NativeThread {
    /// Starts `body` on a new thread; its handle is for `pthread_join`.
    static func start(_ body: @escaping @Sendable () -> Void) throws(SystemError) -> pthread_t {
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        let result = pthread_create(
            &thread, nil,
            { argument in
                Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue().run()
                return nil
            }, box)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(box).release()  // the thread never took it
            throw SystemError(call: "pthread_create", errno: result)
        }
        return thread
    }

    /// Starts `body` on a thread nobody joins: its resources go when it returns.
    static func detach(_ body: @escaping @Sendable () -> Void) throws(SystemError) {
        pthread_detach(try start(body))
    }

    /// What a thread runs; boxed to cross `pthread_create`.
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
