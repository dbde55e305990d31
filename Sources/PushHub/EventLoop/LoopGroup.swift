import CLinux
import Glibc

/// The hub's event loops, one per thread, each with its own SO_REUSEPORT listeners.
///
/// Invariant: `mailboxes[i]` belongs to loop `i`; after `join()` every loop thread has exited.
public final class LoopGroup: Sendable {
    public let mailboxes: [Mailbox]
    private let threads: [pthread_t]

    /// Starts `count` loops serving the given listener sockets (one set per loop).
    init(count: Int, services: HubServices, listenersPerLoop: [[(Listener, ListenerKind)]]) throws(SystemError) {
        var mailboxes: [Mailbox] = []
        var wakeFDs: [Int32] = []
        for _ in 0..<count {
            let wakeFD = try blockingSystemCall("eventfd") { eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC)) }
            mailboxes.append(
                Mailbox(wake: {
                    var one: UInt64 = 1
                    _ = Glibc.write(wakeFD, &one, 8)
                }))
            wakeFDs.append(wakeFD)
        }
        services.setMailboxes(mailboxes)
        var threads: [pthread_t] = []
        for index in 0..<count {
            let mailbox = mailboxes[index]
            let wakeFD = wakeFDs[index]
            let listeners = listenersPerLoop[index]
            let started = LoopStart(body: {
                do {
                    let loop = try EventLoop(
                        index: index, services: services, mailbox: mailbox, wakeFD: wakeFD, listeners: listeners)
                    loop.run()
                } catch {
                    Log.error("event loop failed to start", [("loop", index), ("error", "\(error)")])
                }
                _ = Glibc.close(wakeFD)
            })
            var thread = pthread_t()
            let box = Unmanaged.passRetained(started).toOpaque()
            let result = pthread_create(
                &thread, nil,
                { argument in
                    let start = Unmanaged<LoopStart>.fromOpaque(argument!).takeRetainedValue()
                    start.body()
                    return nil
                }, box)
            guard result == 0 else { throw SystemError(call: "pthread_create", errno: result) }
            threads.append(thread)
        }
        self.mailboxes = mailboxes
        self.threads = threads
    }

    /// Asks every loop to shut down (close 1001 to clients) and drain until `drain` has passed.
    public func shutdown(drain: Duration) {
        let deadline = MonotonicClock.now() + drain.nanoseconds
        for mailbox in mailboxes { mailbox.post(.shutdown(deadline: deadline)) }
    }

    /// Waits for every loop thread to exit.
    public func join() {
        for thread in threads { pthread_join(thread, nil) }
    }
}

/// What a loop thread runs; boxed to cross `pthread_create`.
private final class LoopStart: Sendable {
    let body: @Sendable () -> Void
    init(body: @escaping @Sendable () -> Void) { self.body = body }
}
