/// The closing handshake (RFC 6455 §7.1). Decides only; the connection acts.
///
/// Invariants: at most one close frame is ever sent; once `closed`, every input answers `.none`.
/// The server closes TCP first after the handshake (§7.1.1), so every path ends in a shutdown.
public struct CloseHandshake: Sendable {
    /// Where the handshake stands.
    public enum State: Equatable, Sendable {
        case open
        /// We sent a close and wait for the peer's until `deadline` (nanoseconds, caller's clock).
        case closeSent(deadline: UInt64)
        case closed
    }

    /// What the connection must do next.
    public enum Action: Equatable, Sendable {
        /// Send this close, then keep reading until the peer answers or the deadline passes.
        case sendClose(ClosePayload)
        /// Send this close, then shut the connection down once it is written.
        case sendCloseAndShutdown(ClosePayload)
        /// Shut the connection down (after writing what is queued).
        case shutdown
        case none
    }

    public private(set) var state: State = .open

    public init() {}

    public var isOpen: Bool { state == .open }

    /// The peer sent a close frame: echo its code (1000 when it gave none) and shut down.
    public mutating func peerSentClose(_ close: ClosePayload) -> Action {
        switch state {
        case .open:
            state = .closed
            return .sendCloseAndShutdown(ClosePayload(code: close.code ?? .normal))
        case .closeSent:
            state = .closed
            return .shutdown
        case .closed:
            return .none
        }
    }

    /// We decided to close (shutdown, timeout, policy): send `close` and wait for the answer.
    public mutating func localClose(_ close: ClosePayload, deadline: UInt64) -> Action {
        switch state {
        case .open:
            state = .closeSent(deadline: deadline)
            return .sendClose(close)
        case .closeSent, .closed:
            return .none
        }
    }

    /// The peer broke the protocol: fail the connection (§7.1.7) with the error's close code.
    public mutating func protocolViolated(_ error: ProtocolError) -> Action {
        switch state {
        case .open:
            state = .closed
            return .sendCloseAndShutdown(ClosePayload(code: error.closeCode))
        case .closeSent:
            state = .closed
            return .shutdown
        case .closed:
            return .none
        }
    }

    /// Time passed; shut down if our close went unanswered past its deadline.
    public mutating func timerFired(now: UInt64) -> Action {
        switch state {
        case .closeSent(let deadline) where now >= deadline:
            state = .closed
            return .shutdown
        case .open, .closeSent, .closed:
            return .none
        }
    }
}
