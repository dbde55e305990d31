import CLinux
import Glibc

/// The hub's threads (DESIGN §9): one client loop per core, each with its own SO_REUSEPORT
/// client listener, and the control plane's loop with the admin listener.
///
/// Invariant: `mailboxes[i]` belongs to client loop `i` and `controlMailbox` to the control
/// plane; after `join()` every loop thread has exited.
public final class LoopGroup: Sendable {
    let mailboxes: [Mailbox]
    let controlMailbox: Mailbox
    private let threads: [pthread_t]

    /// Starts the control plane's loop and `clientListeners.count` client loops.
    init(
        controlPlane: ControlPlane, config: HubConfig, metrics: Metrics, tokens: JWTVerifier,
        clientListeners: [Listener], adminListener: Listener
    ) throws(SystemError) {
        var mailboxes: [Mailbox] = []
        var wakeFDs: [Int32] = []
        let addresses = AddressLedger()
        for _ in 0...clientListeners.count {
            let wakeFD = try blockingSystemCall("eventfd") { eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC)) }
            mailboxes.append(
                Mailbox(wake: {
                    var one: UInt64 = 1
                    _ = Glibc.write(wakeFD, &one, 8)
                }))
            wakeFDs.append(wakeFD)
        }
        let control = mailboxes.removeLast()
        let controlWakeFD = wakeFDs.removeLast()
        controlPlane.attach(loops: mailboxes)
        controlPlane.attachKeys(loops: mailboxes)
        // Every loop starts from the restored state; later changes reach each through its mailbox.
        let view = controlPlane.state.view
        let epoch = controlPlane.epoch
        var starts: [@Sendable () -> Void] = []
        for (index, listener) in clientListeners.enumerated() {
            let mailbox = mailboxes[index]
            let wakeFD = wakeFDs[index]
            starts.append({
                Self.run(wakeFD: wakeFD) { () throws(SystemError) in
                    try ClientLoop(
                        index: index, view: view, tokens: tokens, epoch: epoch, control: control, config: config,
                        metrics: metrics, addresses: addresses, mailbox: mailbox, wakeFD: wakeFD, listener: listener
                    )
                }
                // Also when the loop failed to start: the control plane waits for every one.
                control.post(.event(.clientLoopStopped))
            })
        }
        // The control plane is not Sendable: it is handed to its thread once and used only there.
        let plane = UncheckedHandOff(controlPlane)
        starts.append({
            Self.run(wakeFD: controlWakeFD) { () throws(SystemError) in
                try ControlLoop(
                    index: clientListeners.count, controlPlane: plane.value, config: config, metrics: metrics,
                    addresses: addresses, mailbox: control, wakeFD: controlWakeFD, listeners: [adminListener])
            }
        })
        var threads: [pthread_t] = []
        for start in starts { threads.append(try NativeThread.start(start)) }
        self.mailboxes = mailboxes
        controlMailbox = control
        self.threads = threads
    }

    private static func run<Connection>(wakeFD: Int32, _ make: () throws(SystemError) -> EventLoop<Connection>) {
        do {
            try make().run()
        } catch {
            Log.error("event loop failed to start", [("error", "\(error)")])
        }
        _ = Glibc.close(wakeFD)
    }

    /// Asks every loop to shut down (close 1001 to clients) and drain until `drain` has passed.
    public func shutdown(drain: Duration) {
        let deadline = MonotonicClock.now() + drain.nanoseconds
        for mailbox in mailboxes + [controlMailbox] { mailbox.post(.shutdown(deadline: deadline)) }
    }

    /// Gives every loop a reloaded config (applied between two of its ticks): the client loops,
    /// and the control plane's, whose admin listener takes its TLS context from it.
    public func reconfigure(_ config: HubConfig) {
        for mailbox in mailboxes + [controlMailbox] { mailbox.post(.reconfigure(config)) }
    }

    /// Waits for every loop thread to exit.
    public func join() {
        for thread in threads { pthread_join(thread, nil) }
    }
}

/// Moves a loop-confined object to the thread that will own it. Sound only when the sender never
/// touches the object again (the control plane after `LoopGroup.init`).
private struct UncheckedHandOff<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
