import Glibc

/// The outcome of a non-blocking system call: done (with a value), or it would block.
/// EAGAIN is not an error; it is how a non-blocking socket says "not now".
public enum IOResult<Value> {
    case processed(Value)
    case wouldBlock
}

/// Runs a system call that returns -1 and sets errno on failure, retrying EINTR.
/// EBADF and EFAULT mean we broke an invariant (a closed or bogus descriptor): they crash.
@inline(__always)
func systemCall<T: BinaryInteger>(_ name: String, _ body: () -> T) throws(SystemError) -> IOResult<T> {
    while true {
        let result = body()
        if result >= 0 { return .processed(result) }
        let error = Glibc.errno
        switch error {
        case EINTR: continue
        case EAGAIN: return .wouldBlock
        case EBADF, EFAULT: preconditionFailure("\(name) on an invalid descriptor or buffer: errno \(error)")
        default: throw SystemError(call: name, errno: error)
        }
    }
}

/// Like `systemCall`, for calls that never legitimately block (bind, listen, epoll_ctl).
@inline(__always)
@discardableResult
func blockingSystemCall<T: BinaryInteger>(_ name: String, _ body: () -> T) throws(SystemError) -> T {
    switch try systemCall(name, body) {
    case .processed(let value): return value
    case .wouldBlock: throw SystemError(call: name, errno: EAGAIN)
    }
}

/// Nanoseconds on the monotonic clock: what every deadline in PushHub is measured in.
public enum MonotonicClock {
    public static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}

/// Milliseconds since the Unix epoch: timestamps in records, logs and API answers.
public enum WallClock {
    public static func nowMilliseconds() -> Int {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int(spec.tv_sec) * 1000 + Int(spec.tv_nsec) / 1_000_000
    }
}
