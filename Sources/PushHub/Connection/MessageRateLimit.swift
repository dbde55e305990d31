/// The client message rate limit (DESIGN §9): a token bucket of `burst` messages refilled at
/// `perSecond`, kept as one timestamp per connection (the generic cell rate algorithm: the
/// bucket is full when `nextFree <= now`, and each message moves `nextFree` one interval on).
///
/// Invariant: over any window of `t` seconds a connection gets at most `burst + perSecond × t`
/// messages admitted.
struct MessageRateLimit: Sendable, Equatable {
    var perSecond: Int
    var burst: Int

    /// 100 messages per second with bursts of 1,000: a client resuming after a long absence acks
    /// hundreds of replayed syncs at once; a flood (20,000 in 0.3 s before) is stopped.
    static let `default` = MessageRateLimit(perSecond: 100, burst: 1000)

    var isOn: Bool { perSecond > 0 }
    var interval: UInt64 { 1_000_000_000 / UInt64(max(perSecond, 1)) }

    /// One connection's bucket.
    struct Bucket {
        /// When the bucket is full again (0: never used).
        private var nextFree: UInt64 = 0
        /// Set by the first refused message; the second refusal in a row closes.
        private(set) var warned = false

        enum Verdict: Equatable {
            case admit
            /// First time over: answer an error, drop the message.
            case warn
            /// Over again after the warning: close 1008.
            case refuse
        }

        mutating func admit(now: UInt64, limit: MessageRateLimit) -> Verdict {
            guard limit.isOn else { return .admit }
            let start = max(nextFree, now)
            if start - now + limit.interval > UInt64(limit.burst) * limit.interval {
                if warned { return .refuse }
                warned = true
                return .warn
            }
            if nextFree <= now { warned = false }  // a full bucket forgives the warning
            nextFree = start + limit.interval
            return .admit
        }
    }
}
